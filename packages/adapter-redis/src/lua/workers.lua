-- tasklane: workers — the worker registry of a prefix (capability workers), not a lane's:
-- every running worker's entry, renewed on its heartbeat, lapsing unless renewed.
-- KEYS: KEYS[1] the registry (id -> "<lastHeartbeatAt> <registration JSON>"), KEYS[2] when
--       each entry lapses (zset, score epoch ms); both under the hash tag {<prefix>:}, which
--       no lane has (a lane name is not empty). The lane keys of the prelude are unused.
-- ARGV: common 1..6 (unused); ARGV[7] "register", "deregister" or "list"; register:
--       ARGV[8] id, ARGV[9] the registration as JSON, ARGV[10] ttl ms; deregister: ARGV[8] id
-- Returns: register: { lastHeartbeatAt, expiresAt }; deregister: 1; list: the entries that
--          have not lapsed, 3 per entry: id, "<lastHeartbeatAt> <JSON>", expiresAt.

local REGISTRY, LAPSES = KEYS[1], KEYS[2]
local op = ARGV[7]
local nowText = string.format("%d", NOW)

-- Lapsed entries go first (bounded per call; a registry holds a few workers).
local lapsed = redis.call("ZRANGEBYSCORE", LAPSES, "-inf", nowText, "LIMIT", 0, 1000)
if #lapsed > 0 then
  redis.call("HDEL", REGISTRY, unpack(lapsed))
  redis.call("ZREM", LAPSES, unpack(lapsed))
end

if op == "register" then
  local ttl = tonumber(ARGV[10])
  if ttl == nil or ttl <= 0 or ARGV[8] == nil or ARGV[9] == nil then
    return redis.error_reply("TASKLANE_BAD_ARGUMENT register takes an id, a registration, a ttl")
  end
  local expiresAt = NOW + ttl
  redis.call("HSET", REGISTRY, ARGV[8], nowText .. " " .. ARGV[9])
  redis.call("ZADD", LAPSES, expiresAt, ARGV[8])
  return { NOW, expiresAt }
elseif op == "deregister" then
  redis.call("HDEL", REGISTRY, ARGV[8])
  redis.call("ZREM", LAPSES, ARGV[8])
  return 1
elseif op == "list" then
  local entries = redis.call("ZRANGE", LAPSES, 0, -1, "WITHSCORES")
  local out = {}
  if #entries == 0 then return out end
  local ids = {}
  for i = 1, #entries, 2 do ids[#ids + 1] = entries[i] end
  local values = redis.call("HMGET", REGISTRY, unpack(ids))
  for i = 1, #ids do
    if values[i] then
      out[#out + 1] = ids[i]
      out[#out + 1] = values[i]
      out[#out + 1] = entries[2 * i]
    end
  end
  return out
end
return redis.error_reply("TASKLANE_BAD_ARGUMENT workers takes register, deregister or list")
