-- tasklane: set-priority — change waiting and delayed jobs' priority (capability
-- changePriority). A waiting job moves to its place under the new priority, keeping its
-- due time and put order; a delayed or blocked (FLOWS) one takes it when it falls due. Its record is
-- rewritten (extended layout, see JOB RECORDS): the priority is in the body's prefix.
-- KEYS: the eighteen lane keys (see _common.lua)
-- ARGV: common 1..6; ARGV[7] the priority (an integer of 16 bits); then the job ids
-- Returns: one integer per id: 1 ok, 2 wrong state (not waiting, delayed or blocked), 0 not
-- found.

local prio = tonumber(ARGV[7])
if prio == nil or prio ~= math.floor(prio) or prio < -32768 or prio > 32767 then
  return redis.error_reply("TASKLANE_BAD_ARGUMENT set-priority takes a 16-bit integer priority")
end
maintainNow()

local ids = {}
for i = 8, #ARGV do ids[#ids + 1] = ARGV[i] end
load(ids)

local result = {}
local pRem, entombed = {}, {}
local detail = string.format("%d", prio)
for i = 1, #ids do
  local id = ids[i]
  local rec = cache[id]
  if not rec or rec.bad then
    result[i] = 0
  elseif rec.state == WAITING or rec.state == DELAYED or rec.state == BLOCKED then
    if rec.prio ~= prio then
      expand(rec)
      if rec.state == WAITING then
        -- out of its place: a list entry stays as a tombstone (TOMBSTONES); flags 2 is a
        -- late arrival, in the priority zset (LATE ARRIVALS)
        if rec.prio == 0 and rec.flags ~= 2 then
          meta.wl = meta.wl - 1
          metaDirty = true
          entombed[#entombed + 1] = id
        else
          pRem[#pRem + 1] = pmember(rec.due, rec.seq, id)
        end
      end
      rec.body = struct.pack(">h", prio) .. string.sub(rec.body, 3)
      rec.prio = prio
      if rec.state == WAITING then makeWaiting(id, rec) end
    end
    note(rec, EV_PRIORITIZED, detail)
    touch(id, rec)
    result[i] = 1
  else
    result[i] = 2
  end
end

if #pRem > 0 then redis.call("ZREM", KP, unpack(pRem)) end
entomb(entombed)
flushAll()
return result
