-- tasklane: cancel — waiting, delayed, blocked (FLOWS) or active jobs go to canceled. The holder of an active
-- one learns it from its next ack/nack/extend ("canceled") and from a "canceled" event.
-- KEYS: the eighteen lane keys (see _common.lua)
-- ARGV: common 1..6; then the job ids
-- Returns: one integer per id: 1 canceled, 2 finished, 0 not found.

maintainNow()

local ids = {}
for i = 7, #ARGV do ids[#ids + 1] = ARGV[i] end
load(ids)

local result = {}
local pRem, dRem, aRem, activeIds, entombed, blRem = {}, {}, {}, {}, {}, {}
for i = 1, #ids do
  local id = ids[i]
  local rec = cache[id]
  if not rec or rec.bad then
    result[i] = 0
  else
    local state = rec.state
    if state == WAITING or state == DELAYED or state == ACTIVE or state == BLOCKED then
      if state == BLOCKED then
        -- what it waits for runs on (docs/adapter-contract.md, "Flows")
        blRem[#blRem + 1] = id
      elseif state == WAITING then
        -- flags 2: a late arrival, waiting in the priority zset (LATE ARRIVALS)
        if rec.prio == 0 and rec.flags ~= 2 then
          -- its id stays in the list as a tombstone that reserve skips (TOMBSTONES)
          meta.wl = meta.wl - 1
          metaDirty = true
          entombed[#entombed + 1] = id
        else
          pRem[#pRem + 1] = pmember(rec.due, rec.seq, id)
          rec.flags = 0
        end
      elseif state == DELAYED then
        dRem[#dRem + 1] = id
      else
        aRem[#aRem + 1] = id
        activeIds[#activeIds + 1] = id
        rec.flags = 1
      end
      -- an active job's cancel is the "canceled" event at the end (it stops the holder)
      if state ~= ACTIVE then lifecycleEvent("canceled", id) end
      finish(id, rec, CANCELED)
      note(rec, EV_CANCELED)
      touch(id, rec)
      result[i] = 1
    else
      result[i] = 2
    end
  end
end

if #pRem > 0 then redis.call("ZREM", KP, unpack(pRem)) end
if #dRem > 0 then redis.call("ZREM", KD, unpack(dRem)) end
if #aRem > 0 then redis.call("ZREM", KA, unpack(aRem)) end
if #blRem > 0 then redis.call("ZREM", flowKey("bl"), unpack(blRem)) end
entomb(entombed)
flushAll()
if meta.wl <= 0 then
  -- Only tombstones left: drop them (list() cursors count them as popped).
  local n = redis.call("LLEN", KW)
  if n > 0 then
    meta.lp = meta.lp + n
    meta.wl = 0
    metaDirty = true
    redis.call("DEL", KW)
    clearTombstones()
    flushMeta()
  end
end
if #aRem > 0 and (MAX_CONC > 0 or meta.q) and waitingCount() > 0 then wake() end
publishEvent("canceled", activeIds)
-- FLOWS: ends queued in the outbox: Node delivers them now
if meta.fq then result[#result + 1] = "flows" end
return result
