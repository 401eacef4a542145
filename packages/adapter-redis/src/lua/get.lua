-- tasklane: get — one job by id (read only).
-- KEYS: the thirteen lane keys (see _common.lua)
-- ARGV: common 1..6; ARGV[7] id
-- Returns: the job as JSON text, or nil.

local rec = get(ARGV[7])
if not rec then return false end
return infoJson(ARGV[7], rec)
