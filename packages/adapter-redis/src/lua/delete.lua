-- tasklane: delete — remove jobs that are not active (nor being moved: lua/move-out.lua).
-- KEYS: the eighteen lane keys (see _common.lua)
-- ARGV: common 1..6; then the job ids
-- Returns: how many were removed.

maintainNow()

local ids = {}
for i = 7, #ARGV do ids[#ids + 1] = ARGV[i] end
load(ids)

local removed = {}
local rem = { [KP] = {}, [KD] = {}, [KS] = {}, [KF] = {}, [KC] = {}, [KA] = {}, [KZ] = {},
  [flowKey("bl")] = {} }
local ZSET_OF = {
  [DELAYED] = KD, [BLOCKED] = flowKey("bl"), [SUCCEEDED] = KS, [FAILED] = KF, [CANCELED] = KC, [EXPIRED] = KZ,
}
local seen = {}
local entombed, unfailed, pending = {}, {}, {}
for i = 1, #ids do
  local id = ids[i]
  local rec = cache[id]
  if rec and not seen[id] then
    if rec.bad then
      -- undecodable: we cannot tell where it is indexed, so unindex it everywhere
      for _, key in ipairs({ KD, KS, KF, KC, KA, KZ }) do
        local list = rem[key]
        list[#list + 1] = id
      end
      seen[id] = true
      removed[#removed + 1] = id
      lifecycleEvent("deleted", id)
    elseif rec.state ~= ACTIVE and rec.state ~= 8 then
      local state = rec.state
      -- FLOWS: a pending job's deletion is an end for the jobs waiting for it
      if state == WAITING or state == DELAYED or state == BLOCKED then pending[#pending + 1] = id end
      if state == WAITING then
        -- flags 2: a late arrival, waiting in the priority zset (LATE ARRIVALS)
        if rec.prio == 0 and rec.flags ~= 2 then
          -- its id stays in the list as a tombstone that reserve skips (TOMBSTONES)
          meta.wl = meta.wl - 1
          metaDirty = true
          entombed[#entombed + 1] = id
        else
          local list = rem[KP]
          list[#list + 1] = pmember(rec.due, rec.seq, id)
        end
      else
        local list = rem[ZSET_OF[state]]
        list[#list + 1] = id
        if state == FAILED then unfailed[#unfailed + 1] = failureMember(id, rec) end
      end
      if rec.ref then deref(rec.ref) end
      seen[id] = true
      cache[id] = false
      removed[#removed + 1] = id
      lifecycleEvent("deleted", id)
    end
  end
end

for key, members in pairs(rem) do
  if #members > 0 then redis.call("ZREM", key, unpack(members)) end
end
if #unfailed > 0 then redis.call("ZREM", KEYS[18], unpack(unfailed)) end
queueEndsOf(pending, "deleted")
if #removed > 0 then dropJobRecords(removed) end
entomb(entombed)
flushAll()
-- FLOWS: ends queued in the outbox: Node delivers them now
if meta.fq then return { #removed, "flows" } end
return #removed
