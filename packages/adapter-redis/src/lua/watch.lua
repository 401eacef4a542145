-- tasklane: watch — somebody waits for jobs of this lane to finish (Adapter.watch): until
-- ARGV[7] ms from now, every finish and departure is published, lifecycle events on or off
-- (see WATCHING in _common.lua). Watchers renew it while they watch; it lapses by itself,
-- so a watcher that died costs nothing for long.
-- KEYS: the eighteen lane keys (see _common.lua)
-- ARGV: common 1..6; ARGV[7] how long, ms
-- Returns: 1

local ttl = tonumber(ARGV[7])
if ttl == nil or ttl <= 0 then
  return redis.error_reply("TASKLANE_BAD_ARGUMENT watch takes a duration in ms")
end
local untilAt = NOW + ttl
-- the meta hash's wu (see WATCHING)
if untilAt > (meta.wu or 0) then
  meta.wu = untilAt
  metaDirty = true
  flushMeta()
end
return 1
