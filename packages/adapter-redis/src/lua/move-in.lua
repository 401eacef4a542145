-- tasklane: move-in — step 2 of a move (capability move): put the jobs move-out marked into
-- this lane by id, with their history (plus "moved", detail the source lane), results,
-- reports and expiry. Idempotent: a job already here from the same move (its token in its
-- bundle, field k) is done already.
-- KEYS: the eighteen lane keys (see _common.lua)
-- ARGV: common 1..6; ARGV[7] the source lane; then 2 per job: id, move-out's JSON for it
-- Returns: one integer per job: 1 moved (or moved already), 3 duplicate (this lane holds
--          another job with this id).

maintainNow()

local source = ARGV[7]
local ids, jobs = {}, {}
for i = 8, #ARGV, 2 do
  ids[#ids + 1] = ARGV[i]
  local ok, job = pcall(cjson.decode, ARGV[i + 1])
  jobs[#ids] = ok and type(job) == "table" and job or {}
end
load(ids)
local stored = redis.call("HMGET", KR, unpack(ids))

local wasEmpty = meta.wl == 0 and redis.call("ZCARD", KP) == 0
local out = {}
local delayedAdd, expiries, sets, tagged, grouped = {}, {}, {}, {}, {}
local earliest = nil
for i = 1, #ids do
  local id, job = ids[i], jobs[i]
  if cache[id] then
    -- here already: this move's (its token), or another job's
    local same = false
    if stored[i] and string.byte(stored[i], 1) == 0 then
      local ok, b = pcall(cjson.decode, string.sub(stored[i], 2))
      same = ok and type(b) == "table" and b.k ~= nil and b.k == job.k
    end
    out[i] = same and 1 or 3
  elseif type(job.text) ~= "string" then
    out[i] = 3
  else
    meta.seq = meta.seq + 1
    metaDirty = true
    local prio = tonumber(job.prio) or 0
    local hist, hcount = {}, 0
    if type(job.h) == "table" then
      for k = 1, #job.h do
        local e = job.h[k]
        local detail = tostring(e[3] or "")
        hist[#hist + 1] = struct.pack(HIST_ENTRY, tonumber(e[1]) or 0, tonumber(e[2]) or 1, #detail)
          .. detail
        hcount = hcount + 1
      end
    end
    local rec = {
      state = WAITING, attempt = tonumber(job.attempt) or 0, stalls = 0, token = 0, exp = 0,
      res = 0, fin = 0, due = tonumber(job.due) or NOW, prio = prio, seq = meta.seq, flags = 0,
      hcount = hcount,
      body = struct.pack(PREFIX, prio, meta.seq, NOW, tonumber(job.pub) or NOW) .. job.text,
      err = job.err ~= "" and job.err or false, hist = table.concat(hist),
    }
    -- with no entries it would read as published here and now: keep at least that
    if hcount == 0 then rec.hist, rec.hcount = "", 0 end
    note(rec, EV_MOVED, source)
    if job.delayed and rec.due > NOW then
      rec.state = DELAYED
      delayedAdd[#delayedAdd + 1] = rec.due
      delayedAdd[#delayedAdd + 1] = id
      if earliest == nil or rec.due < earliest then earliest = rec.due end
    else
      makeWaiting(id, rec)
    end
    touch(id, rec)
    -- the token marks it as this move's (see above); results and reports come along
    local bundle = {}
    if type(job.r) == "string" then
      if string.byte(job.r, 1) == 0 then
        local ok, b = pcall(cjson.decode, string.sub(job.r, 2))
        if ok and type(b) == "table" then bundle = b end
      else
        bundle.r = job.r
      end
    end
    bundle.m = nil
    bundle.k = job.k
    -- its tags are indexed here (TAGS)
    if type(bundle.g) == "table" and #bundle.g > 0 then addTags(id, bundle.g, tagged) end
    -- its fair group comes along (FAIR GROUPS): gj, where this lane's scripts look it up
    if type(job.q) == "string" and job.q ~= "" then
      grouped[#grouped + 1] = id
      grouped[#grouped + 1] = job.q
    end
    sets[#sets + 1] = id
    sets[#sets + 1] = "\0" .. cjson.encode(bundle)
    local e = tonumber(job.e)
    if e then
      expiries[#expiries + 1] = e
      expiries[#expiries + 1] = id
      lowerDelayedBound(e)
    end
    if type(job.fl) == "string" then
      -- its flow links (FLOWS): its end here reaches the jobs waiting for it
      redis.call("HSET", flowKey("fl"), id, job.fl)
      markFlows()
    end
    lifecycleEvent("moved", id)
    out[i] = 1
  end
end

if #sets > 0 then
  redis.call("HSET", KR, unpack(sets))
  markOps("r", 1)
end
for i = 1, #tagged, 7998 do
  redis.call("ZADD", KEYS[17], unpack(tagged, i, math.min(i + 7997, #tagged)))
end
if #expiries > 0 then
  redis.call("ZADD", KE, unpack(expiries))
  markOps("x", 2)
end
storeGroups(grouped)
flushRecords()
if wasEmpty and #listAppend + #prioAdd > 0 then wake() end
if earliest ~= nil then
  lowerDelayedBound(earliest)
  wakeIfEarliest(earliest)
  redis.call("ZADD", KD, unpack(delayedAdd))
end
flushAll()
return out
