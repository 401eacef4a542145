-- tasklane: schedule — write, remove or read the lane's recurring schedules.
-- KEYS: the eighteen lane keys (see _common.lua); KEYS[19] the schedules hash, KEYS[20] the
--       due index (see scheduleWrite in _common.lua)
-- ARGV: common 1..6; ARGV[7] the operation:
--   "put" ARGV[8] id, ARGV[9] expected revision ("" any, "0" none yet), ARGV[10] nextAt
--         ("" none), ARGV[11] data. Returns the new revision, or -1 (stale: nothing written).
--   "del" ARGV[8] id. Returns 1 removed, 0 none.
--   "due" ARGV[8] now, ARGV[9] limit. Returns id, stored text, ... of the schedules whose
--         nextAt <= now, earliest first (one call: index and records read together).

local op = ARGV[7]
if op == "put" then
  return scheduleWrite(ARGV[8], ARGV[9], ARGV[10], ARGV[11])
elseif op == "del" then
  redis.call("ZREM", KEYS[20], ARGV[8])
  return redis.call("HDEL", KEYS[19], ARGV[8])
elseif op == "due" then
  local ids = redis.call("ZRANGEBYSCORE", KEYS[20], "-inf", ARGV[8], "LIMIT", 0, ARGV[9])
  if #ids == 0 then return {} end
  local texts = redis.call("HMGET", KEYS[19], unpack(ids))
  local out = {}
  for i = 1, #ids do
    if texts[i] then
      out[#out + 1] = ids[i]
      out[#out + 1] = texts[i]
    end
  end
  return out
end
return redis.error_reply("TASKLANE_BAD_ARGUMENT schedule takes put, del or due")
