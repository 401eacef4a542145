-- tasklane: get — one job by id (after promoting due jobs and reclaiming expired leases, so
-- the job is shown where it now is).
-- KEYS: the eighteen lane keys (see _common.lua)
-- ARGV: common 1..6; ARGV[7] id
-- Returns: the job as JSON text, or nil.

maintain()
flushAll()
local rec = get(ARGV[7])
if not rec then return false end
local result = false
if meta.r then result = redis.call("HGET", KR, ARGV[7]) end
return infoJson(ARGV[7], rec, result, expiriesOf({ ARGV[7] })[ARGV[7]])
