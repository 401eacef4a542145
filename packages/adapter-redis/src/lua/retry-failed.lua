-- tasklane: retry-failed — failed jobs back to waiting, due now, attempt reset to 0.
-- KEYS: the eighteen lane keys (see _common.lua)
-- ARGV: common 1..6; ARGV[7] "*" for every failed job (at most 1000 per call) or "ids";
--       then the job ids
-- Returns: { moved, more } (more = 1 when "*" left failed jobs for another call)

maintainNow()

local all = ARGV[7] == "*"
local ids = {}
if all then
  ids = redis.call("ZRANGE", KF, 0, BUDGET - 1)
else
  for i = 8, #ARGV do ids[#ids + 1] = ARGV[i] end
end
load(ids)

local wasEmpty = meta.wl == 0 and #listAppend == 0 and redis.call("ZCARD", KP) == 0
local moved, unfailed = {}, {}
for i = 1, #ids do
  local id = ids[i]
  local rec = cache[id]
  if rec and rec.bad and all then
    -- undecodable, yet listed as failed: hand it out again (as malformed)
    moved[#moved + 1] = id
    lifecycleEvent("retried", id)
    listAppend[#listAppend + 1] = id
    meta.wl = meta.wl + 1
    metaDirty = true
  elseif rec and not rec.bad and rec.state == FAILED then
    unfailed[#unfailed + 1] = failureMember(id, rec)
    rec.attempt = 0
    rec.stalls = 0
    rec.skip = false
    rec.fin = 0
    rec.due = NOW
    note(rec, EV_RETRIED)
    lifecycleEvent("retried", id)
    makeWaiting(id, rec)
    touch(id, rec)
    moved[#moved + 1] = id
  end
end
if #unfailed > 0 then redis.call("ZREM", KEYS[18], unpack(unfailed)) end
if #moved > 0 then
  redis.call("ZREM", KF, unpack(moved))
  -- Retried by hand: an operator wants it run, whatever its expiry said (EXPIRY).
  if meta.x then redis.call("ZREM", KE, unpack(moved)) end
end
flushRecords()
if wasEmpty and #listAppend + #prioAdd > 0 then wake() end
flushAll()
local more = 0
if all and #ids == BUDGET then more = 1 end
return { #moved, more }
