-- tasklane: probe — how many due jobs a reserve could take now (after promoting due jobs and
-- reclaiming expired leases, as reserve does first; at most BUDGET of each per call, so
-- due delayed jobs left over are counted too).
-- KEYS: the eighteen lane keys (see _common.lua); on a lane with a rate limit also KEYS[19],
--   its log of starts (as reserve's)
-- ARGV: common 1..6; on a lane with a rate limit ARGV[7] its max, ARGV[8] its durationMs
-- Returns: the number of jobs.

maintain()
flushAll()
if meta.paused then return 0 end
local n = waitingCount() + redis.call("ZCOUNT", KD, "-inf", NOW)
if MAX_CONC > 0 then n = math.max(0, math.min(n, MAX_CONC - redis.call("ZCARD", KA))) end
-- FAIR GROUPS: a group at its limit hands out nothing (see _common.lua)
if meta.q and (meta.q > 0 or meta.qr) then
  local tag = string.sub(KM, 1, -2)
  -- GROUP WINDOWS: each group's starts left in its window
  local roomOf = meta.qr
    and function(g) return groupWindowRoom(tag .. "gw:" .. g, NOW, meta.qr, meta.qrMs) end
  local limit = meta.q > 0 and meta.q or math.huge
  local g = select(2, groupTally(tag, limit, meta.q == 0 and {} or nil, roomOf))
  if g then n = math.min(n, g) end
end
-- A full window lets nothing start, so a selector must not count it as ready (reserve
-- prunes the log; read-only here: the starts inside (NOW - durationMs, NOW]).
if KEYS[19] then
  local inWindow = redis.call("ZCOUNT", KEYS[19], "(" .. (NOW - tonumber(ARGV[8])), "+inf")
  n = math.max(0, math.min(n, tonumber(ARGV[7]) - inWindow))
end
return n
