-- tasklane: extend — move the lease of active jobs whose lock is current.
-- KEYS: the eleven queue keys (see _common.lua)
-- ARGV: common 1..6; ARGV[7] leaseMs; then 2 per lock: id, token
-- Returns: one integer per lock: 1 ok, 2 canceled, 0 lost.

local lease = tonumber(ARGV[7])
if (#ARGV - 7) % 2 ~= 0 then
  return redis.error_reply("TASKLANE_BAD_ARGUMENT extend takes 2 arguments per item")
end

-- Every lease moved in this call ends at the same time: its score text is made once.
local expText = string.format("%d", NOW + lease)

local ids = {}
for i = 8, #ARGV, 2 do ids[#ids + 1] = ARGV[i] end
load(ids)

local result = {}
local leases = {}
for i = 1, #ids do
  local id = ids[i]
  local rec = cache[id]
  local status = lockStatus(rec, ARGV[7 + 2 * i])
  result[i] = status
  if status == 1 then
    rec.exp = NOW + lease
    touch(id, rec)
    leases[#leases + 1] = expText
    leases[#leases + 1] = id
  end
end
if #leases > 0 then
  redis.call("ZADD", KA, unpack(leases))
  flushRecords()
  lowerLeaseBound(NOW + lease)
  flushMeta()
end
return result
