-- tasklane: put — store a batch of new jobs (publishMany is one call).
-- KEYS: the eleven queue keys (see _common.lua)
-- ARGV: common 1..6; ARGV[7] "1" to publish a "put" event for the created ids;
--       ARGV[8] the layout of the jobs that follow:
--         "5": 5 per job: id, text (the body's text, see _common.lua), priority,
--              runAt ("" = now), publishedAt;
--         "2": ARGV[9..11] priority, runAt, publishedAt shared by every job, then
--              2 per job: id, text (publishMany's usual case: 3 fewer arguments per job
--              to send, parse and turn into Lua strings).
-- Returns: one integer per job, 1 created / 0 duplicate (in-batch: first occurrence wins).

local stride = tonumber(ARGV[8])
local first = stride == 2 and 12 or 9
if (stride ~= 2 and stride ~= 5) or #ARGV < first - 1 or (#ARGV - first + 1) % stride ~= 0 then
  return redis.error_reply("TASKLANE_BAD_ARGUMENT put takes layout 2 or 5 and whole jobs")
end

local wlBefore = meta.wl
maintain()

local n = (#ARGV - first + 1) / stride
local ids = {}
for i = 0, n - 1 do ids[i + 1] = ARGV[first + i * stride] end
-- Shared fields (layout 2): read once. Per job (layout 5): at + 2 .. at + 4.
local sharedPrio = stride == 2 and (tonumber(ARGV[9]) or 0) or nil
local sharedRunAt = stride == 2 and tonumber(ARGV[10]) or nil
local sharedPublishedAt = stride == 2 and (tonumber(ARGV[11]) or NOW) or nil
if n > 0 then load(ids) end

local result = {}
local created = {}
local w = #rawWrites
local delayedAdd = {}
local earliest = nil
for i = 0, n - 1 do
  local at = first + i * stride
  local id = ARGV[at]
  if cache[id] then
    result[i + 1] = 0
  else
    local prio, runAt, publishedAt
    if stride == 2 then
      prio, runAt, publishedAt = sharedPrio, sharedRunAt, sharedPublishedAt
    else
      prio = tonumber(ARGV[at + 2]) or 0
      runAt = tonumber(ARGV[at + 3])
      publishedAt = tonumber(ARGV[at + 4]) or NOW
    end
    meta.seq = meta.seq + 1
    metaDirty = true
    local rec
    if runAt and runAt > NOW then
      rec = {
        state = DELAYED, attempt = 0, stalls = 0, token = 0, exp = 0, res = 0, fin = 0,
        due = runAt, prio = prio, seq = meta.seq, flags = 0, hcount = 0,
        body = struct.pack(PREFIX, prio, meta.seq, NOW, publishedAt) .. ARGV[at + 1],
        err = false, hist = "",
      }
      rawWrites[w + 1] = id
      rawWrites[w + 2] = encode(rec)
      delayedAdd[#delayedAdd + 1] = runAt
      delayedAdd[#delayedAdd + 1] = id
      if earliest == nil or runAt < earliest then earliest = runAt end
    else
      rec = { state = WAITING, prio = prio, seq = meta.seq, due = NOW }
      rawWrites[w + 1] = id
      rawWrites[w + 2] = struct.pack(FRESH, WAITING, prio, meta.seq, NOW, publishedAt) .. ARGV[at + 1]
      makeWaiting(id, rec)
    end
    w = w + 2
    cache[id] = rec
    created[#created + 1] = id
    result[i + 1] = 1
  end
end

-- The first write grows memory: under OOM the whole call is refused, nothing written.
flushRecords()
-- Idle workers block only when nothing was waiting: wake one on the empty -> non-empty edge.
if #listAppend + #prioAdd > 0 and wlBefore == 0 and redis.call("ZCARD", KP) == 0 then wake() end
flushWaiting()
if earliest ~= nil then
  lowerDelayedBound(earliest)
  wakeIfEarliest(earliest)
  for i = 1, #delayedAdd, 7998 do
    redis.call("ZADD", KD, unpack(delayedAdd, i, math.min(i + 7997, #delayedAdd)))
  end
end
flushMeta()
if flushFinished() or NOW - meta.rs >= 1000 then retention() end
if ARGV[7] == "1" then publishEvent("put", created) end
return result
