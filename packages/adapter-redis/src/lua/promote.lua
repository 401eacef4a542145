-- tasklane: promote — delayed jobs become due now (capability promote): waiting, due at
-- this call's time, in their put order among jobs due then.
-- KEYS: the eighteen lane keys (see _common.lua)
-- ARGV: common 1..6; then the job ids
-- Returns: one integer per id: 1 ok (promoted, or waiting already), 2 wrong state, 0 not
-- found.

maintainNow()

local ids = {}
for i = 7, #ARGV do ids[#ids + 1] = ARGV[i] end
load(ids)

local wasEmpty = meta.wl == 0 and redis.call("ZCARD", KP) == 0
local result = {}
local dRem = {}
for i = 1, #ids do
  local id = ids[i]
  local rec = cache[id]
  if not rec or rec.bad then
    result[i] = 0
  elseif rec.state == WAITING then
    result[i] = 1
  elseif rec.state == DELAYED then
    dRem[#dRem + 1] = id
    rec.due = NOW
    note(rec, EV_PROMOTED)
    makeWaiting(id, rec)
    touch(id, rec)
    result[i] = 1
  else
    result[i] = 2
  end
end

if #dRem > 0 then redis.call("ZREM", KD, unpack(dRem)) end
flushRecords()
-- Idle workers block only when nothing was waiting: wake one on the empty -> non-empty edge.
if wasEmpty and #listAppend + #prioAdd > 0 then wake() end
flushAll()
return result
