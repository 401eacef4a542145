-- tasklane: probe — how many due jobs a reserve could take now (after promoting due jobs and
-- reclaiming expired leases, as reserve does first; at most BUDGET of each per call, so
-- due delayed jobs left over are counted too).
-- KEYS: the eighteen lane keys (see _common.lua)
-- ARGV: common 1..6
-- Returns: the number of jobs.

maintain()
flushAll()
if meta.paused then return 0 end
local n = waitingCount() + redis.call("ZCOUNT", KD, "-inf", NOW)
if MAX_CONC > 0 then n = math.max(0, math.min(n, MAX_CONC - redis.call("ZCARD", KA))) end
return n
