-- tasklane: counts — exact counts per state (after promoting due jobs and reclaiming
-- expired leases, so due delayed jobs count as waiting).
-- KEYS: the eighteen lane keys (see _common.lua)
-- ARGV: common 1..6
-- Returns: { waiting, delayed, active, succeeded, failed, canceled, paused (0/1), expired,
--   blocked (FLOWS) }

maintain()
flushAll()
local paused = 0
if meta.paused then paused = 1 end
return {
  waitingCount(),
  redis.call("ZCARD", KD),
  redis.call("ZCARD", KA),
  redis.call("ZCARD", KS),
  redis.call("ZCARD", KF),
  redis.call("ZCARD", KC),
  paused,
  redis.call("ZCARD", KZ),
  meta.f and redis.call("ZCARD", flowKey("bl")) or 0,
}
