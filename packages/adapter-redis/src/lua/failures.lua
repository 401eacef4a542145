-- tasklane: failures — the lane's failed jobs grouped by error name (capability
-- failureGroups), from the failure index (KEYS[18], FAILURE GROUPS in _common.lua): per
-- group one ZLEXCOUNT and its newest entry, never a walk over its jobs.
-- KEYS: the eighteen lane keys (see _common.lua)
-- ARGV: common 1..6; ARGV[7] most groups to return
-- Returns: 6 per group, in index order: name, count, the newest job's id, its text, its
--          error (JSON), its finishedAt.

maintain()
flushAll()

local limit = tonumber(ARGV[7])
local out = {}
local min = "-"
for _ = 1, limit do
  local first = redis.call("ZRANGE", KEYS[18], min, "+", "BYLEX", "LIMIT", 0, 1)[1]
  if not first then break end
  local colon = string.find(first, ":", 1, true)
  local len = colon and tonumber(string.sub(first, 1, colon - 1))
  if not len then break end
  local name = string.sub(first, colon + 1, colon + len)
  local prefix = indexPrefix(name)
  local stop = string.sub(prefix, 1, -2) .. "\1"
  local count = redis.call("ZLEXCOUNT", KEYS[18], "[" .. prefix, "(" .. stop)
  local newest = redis.call("ZRANGE", KEYS[18], "(" .. stop, "[" .. prefix, "BYLEX", "REV",
    "LIMIT", 0, 1)[1]
  local id = string.sub(newest, #prefix + 14)
  local rec = get(id)
  if type(rec) == "table" and not rec.bad then
    expand(rec)
    out[#out + 1] = name
    out[#out + 1] = count
    out[#out + 1] = id
    out[#out + 1] = textOf(rec)
    out[#out + 1] = rec.err or ""
    out[#out + 1] = rec.fin
  end
  min = "[" .. stop
end
return out
