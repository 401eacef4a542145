-- tasklane: flow — store one lane's jobs of a putFlow (capability flows; docs/adapter-
-- contract.md, "Flows"; FLOWS in _common.lua): put's body stores them all (as put does,
-- expiries and tags included), each job that waits for others delayed until NEVER, and
-- then this script's end makes those blocked, with their flow links, and tells the jobs
-- that others of the flow wait for of them, in the same call (parents are stored first:
-- flows.ts).
-- This file is the prologue and the end: scripts.ts wraps put.lua's body between them.
-- KEYS: the eighteen lane keys (see _common.lua)
-- ARGV: common 1..6; ARGV[7] JSON { b = the blocked jobs: [[index in put's jobs from 1,
--       id, runAt (0 = none), links JSON ({ d = entries, n = how many })], ...], p = 4 per
--       link: the id of a job of this lane (of this call, or of an interrupted call of the
--       same flow), the lane, id and entry index of a job waiting for it }; then put's own
--       arguments (flags, layout 5, jobs, extras), which become ARGV[7] onwards
-- Returns: { put's reply, "flows" when ends were queued (a dependency already ended) }

local NEVER = 281474976710655
local flowSpec = ARGV[7]
table.remove(ARGV, 7)
