-- tasklane: move-done — step 3 of a move (capability move): the jobs move-in put into the
-- target leave this lane; those it refused (the target holds another job with the id)
-- come back (waiting, or where they were: delayed, failed). Only jobs still marked by the
-- move's token are touched.
-- KEYS: the eighteen lane keys (see _common.lua)
-- ARGV: common 1..6; then 3 per job: id, its move's token, "1" moved / "0" refused
-- Returns: how many left the lane.

maintainNow()

local ids, tokens, moved = {}, {}, {}
for i = 7, #ARGV, 3 do
  ids[#ids + 1] = ARGV[i]
  tokens[#ids] = ARGV[i + 1]
  moved[#ids] = ARGV[i + 2] == "1"
end
load(ids)
local stored = redis.call("HMGET", KR, unpack(ids))

local gone, sets = {}, {}
local wasEmpty = meta.wl == 0 and redis.call("ZCARD", KP) == 0
for i = 1, #ids do
  local id = ids[i]
  local rec = cache[id]
  local bundle = nil
  if stored[i] and string.byte(stored[i], 1) == 0 then
    local ok, b = pcall(cjson.decode, string.sub(stored[i], 2))
    if ok and type(b) == "table" then bundle = b end
  end
  local m = bundle and type(bundle.m) == "table" and bundle.m
  local job = nil
  if m then
    local ok, j = pcall(cjson.decode, m.j)
    job = ok and type(j) == "table" and j or nil
  end
  if rec and not rec.bad and rec.state == MOVING and job and job.k == tokens[i] then
    if moved[i] then
      if rec.ref then deref(rec.ref) end
      cache[id] = false
      gone[#gone + 1] = id
    else
      -- refused: back where it was (an active one, whose lease is fenced, waiting)
      bundle.m = nil
      local value = bundle.r
      if next(bundle) ~= nil and (bundle.p or bundle.l or bundle.d or bundle.g) then
        value = "\0" .. cjson.encode(bundle)
      end
      if value then
        sets[#sets + 1] = id
        sets[#sets + 1] = value
      else
        redis.call("HDEL", KR, id)
      end
      if m.s == DELAYED and rec.due > NOW then
        rec.state = DELAYED
        redis.call("ZADD", KD, rec.due, id)
        lowerDelayedBound(rec.due)
      elseif m.s == FAILED then
        finish(id, rec, FAILED)
      else
        makeWaiting(id, rec)
      end
      touch(id, rec)
    end
  end
end

if #gone > 0 then dropJobRecords(gone) end
if #sets > 0 then redis.call("HSET", KR, unpack(sets)) end
flushRecords()
if wasEmpty and #listAppend + #prioAdd > 0 then wake() end
flushAll()
return #gone
