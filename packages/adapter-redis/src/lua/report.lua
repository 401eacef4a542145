-- tasklane: report — running jobs' progress and log lines (capability reports), fenced like
-- extend: stored only for a current lock ("ok"), with the job's result and reports in
-- KEYS[14] (see REPORTS in _common.lua); a "progress" lifecycle event for each job whose
-- report stored something.
-- KEYS: the eighteen lane keys (see _common.lua)
-- ARGV: common 1..6; ARGV[7] the lane's logLimit; then one report per lock (JSON, see
--       REPORTS); then the locks' ids, then their tokens packed (see lockIds)
-- Returns: one integer per lock: 1 ok, 2 canceled, 0 lost.

local n = (#ARGV - 8) / 2
local ids, _, tokens = lockIds(8 + n)
if ids == nil or n ~= math.floor(n) then
  return redis.error_reply("TASKLANE_BAD_ARGUMENT report takes a logLimit, reports, ids, tokens")
end
load(ids)

local result = {}
local okIds, okReports = {}, {}
for i = 1, #ids do
  local status = lockStatus(cache[ids[i]], tokenAt(tokens, i))
  result[i] = status
  if status == 1 then
    okIds[#okIds + 1] = ids[i]
    okReports[#okReports + 1] = ARGV[7 + i]
  end
end
storeReports(okIds, okReports, nil, tonumber(ARGV[7]))
flushMeta()
-- publishes the "progress" events (no record was changed)
flushRecords()
return result
