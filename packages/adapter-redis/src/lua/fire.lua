-- tasklane: fire — fire a recurring schedule in one step: if its revision is still the
-- expected one, write it (its next slot, its run count) and put the slots' jobs; otherwise
-- write nothing. This file is the prologue: scripts.ts appends put.lua's body to it.
-- KEYS: the eighteen lane keys (see _common.lua); KEYS[19], KEYS[20] as in schedule.lua
-- ARGV: common 1..6; ARGV[7] id, ARGV[8] expected revision, ARGV[9] nextAt ("" none),
--       ARGV[10] data; then put's own arguments (flags, layout, jobs), which become ARGV[7]
--       onwards before put's body runs.
-- Returns: "stale" (nothing written), or put's reply. The client builds put's arguments
-- (layout 5), so the body never refuses them after the schedule was written; under OOM
-- the function is refused whole (the EVAL form: its first write is).

do
  local revision = scheduleWrite(ARGV[7], ARGV[8], ARGV[9], ARGV[10])
  if revision < 0 then return "stale" end
  for _ = 1, 4 do table.remove(ARGV, 7) end
end
