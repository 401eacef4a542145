-- tasklane: link — step 2 of a putFlow (capability flows; FLOWS in _common.lua): each
-- dependency of this lane learns of a job waiting for it. A dependency that has ended
-- (or is gone: deleted since the flow checked it) queues its end for that job in this
-- lane's outbox at once, as its end would have; a link already made is not made twice (a
-- repeated putFlow).
-- KEYS: the eighteen lane keys (see _common.lua)
-- ARGV: common 1..6; then 4 per link: the dependency's id, the waiting job's lane, id and
--       entry index (from 0)
-- Returns: "flows" when ends were queued, else "".

maintainNow()
markFlows()
local ids = {}
for i = 7, #ARGV, 4 do ids[#ids + 1] = ARGV[i] end
load(ids)
local links = redis.call("HMGET", flowKey("fl"), unpack(ids))
local byId = {}
local names = { [SUCCEEDED] = "succeeded", [FAILED] = "failed", [CANCELED] = "canceled",
  [EXPIRED] = "expired" }
for k = 1, #ids do
  local id = ids[k]
  local f = byId[id]
  if f == nil then
    f = decodeLinks(links[k])
    byId[id] = f
  end
  local at = 7 + 4 * (k - 1)
  local lane, waiting, index = ARGV[at + 1], ARGV[at + 2], tonumber(ARGV[at + 3])
  addDependent(f, lane, waiting, index)
  local rec = cache[id]
  local ended = nil
  if not rec then
    ended = { s = "deleted" }
  elseif not rec.bad and names[rec.state] then
    ended = { s = names[rec.state] }
    if rec.state == SUCCEEDED and meta.r then
      local stored = redis.call("HGET", KR, id)
      if stored and string.byte(stored, 1) == 0 then
        local ok, b = pcall(cjson.decode, string.sub(stored, 2))
        stored = ok and type(b) == "table" and type(b.r) == "string" and b.r or nil
      end
      if stored then ended.r = stored end
    end
  end
  if ended then
    redis.call("HSETNX", flowKey("ob"), lane .. "\n" .. waiting .. "\n" .. index,
      cjson.encode(ended))
    meta.fq = true
  end
end
local set = {}
for id, f in pairs(byId) do
  -- a gone dependency keeps no links (nothing would remove them)
  if cache[id] then
    set[#set + 1] = id
    set[#set + 1] = cjson.encode(f)
  end
end
if #set > 0 then redis.call("HSET", flowKey("fl"), unpack(set)) end
flushAll()
return meta.fq and "flows" or ""
