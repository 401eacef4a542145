-- tasklane: put — store a batch of new jobs (publishMany is one call).
-- KEYS: the eleven queue keys (see _common.lua)
-- ARGV: common 1..6; ARGV[7] "1" to publish a "put" event for the created ids;
--       ARGV[8] the layout of the jobs that follow:
--         "5": 5 per job: id, text (the body's text, see _common.lua), priority,
--              runAt ("" = now), publishedAt;
--         "p": ARGV[9..11] priority, runAt, publishedAt shared by every job, ARGV[12] the
--              jobs packed: per job ">I2" id length, id, ">I4" text length, text
--              (publishMany's usual case; put-batch.ts says why).
-- Returns: the number of jobs when every job was created; otherwise one integer per job,
-- 1 created / 0 duplicate (in-batch: first occurrence wins).

-- The jobs as ids[i], texts[i]; n = -1 when the arguments are not a whole layout. Checked
-- before anything is written.
local layout = ARGV[8]
local ids, texts = {}, {}
local n = -1
if layout == "p" and #ARGV == 12 then
  -- struct.unpack raises on a truncated job: the whole batch is refused, not half read.
  -- Locals only inside the loop (no upvalues, no global lookup per job).
  local ok, a, b, c = pcall(function(packed)
    local split, idList, textList, count, pos, size = struct.unpack, {}, {}, 0, 1, #packed
    while pos <= size do
      count = count + 1
      idList[count], textList[count], pos = split(">I2c0I4c0", packed, pos)
    end
    return idList, textList, count
  end, ARGV[12])
  if ok then ids, texts, n = a, b, c end
elseif layout == "5" and (#ARGV - 8) % 5 == 0 then
  n = (#ARGV - 8) / 5
  for i = 1, n do
    ids[i] = ARGV[4 + 5 * i]
    texts[i] = ARGV[5 + 5 * i]
  end
end
if n < 0 then
  return redis.error_reply("TASKLANE_BAD_ARGUMENT put takes layout p or 5 and whole jobs")
end
-- Shared fields (layout p): read once. Per job (layout 5): ARGV[6 + 5i .. 8 + 5i].
local shared = layout == "p"
local sharedPrio = shared and (tonumber(ARGV[9]) or 0) or nil
local sharedRunAt = shared and tonumber(ARGV[10]) or nil
local sharedPublishedAt = shared and (tonumber(ARGV[11]) or NOW) or nil

local wlBefore = meta.wl
maintain()

-- Only existing records are decoded and cached: a new id (the usual case) costs no cache
-- entry until it is created. An id already in the cache (maintenance read it) keeps the
-- record this call may have changed.
if n > 0 then
  local raws = redis.call("HMGET", KJ, unpack(ids))
  for i = 1, n do
    local raw = raws[i]
    if raw and cache[ids[i]] == nil then remember(ids[i], raw) end
  end
end

-- Per job: 1 created / 0 duplicate; only built once a duplicate shows up.
local result = nil
local function duplicate(i)
  if result == nil then
    result = {}
    for k = 1, i - 1 do result[k] = 1 end
  end
  result[i] = 0
end
local created = {}
local events = ARGV[7] == "1"
-- created ids are listed for "put" events and for "published" lifecycle events
local track = events or LIFECYCLE
local w = #rawWrites
local delayedAdd = {}
local earliest = nil

if shared and not (sharedRunAt and sharedRunAt > NOW) then
  -- Fast path: jobs that share priority and publishedAt and are due now (publishMany's
  -- usual case). A fresh record is FRESH's fields then the text, and only seq differs
  -- between jobs, so each record is concatenated from pieces made once per call: the
  -- state and priority, seq's high five bytes (redone when the low byte wraps), its low
  -- byte (one-byte strings made once each, as they come up), putAt and publishedAt. No
  -- struct.pack and no decoded record per job: a 1,000-job call spent 1.8 µs per job in
  -- the general loop below. Created ids are marked in the cache with one shared table, as
  -- nothing later in put reads their records.
  local head = struct.pack(">Bh", WAITING, sharedPrio)
  local tail = struct.pack(">I6i6", NOW, sharedPublishedAt)
  local byte = {}
  local seq = meta.seq
  local high = struct.pack(">I5", math.floor((seq + 1) / 256))
  local toList = sharedPrio == 0
  local listedBefore = #listAppend
  local listed = listedBefore
  local CREATED = { state = WAITING, prio = sharedPrio }
  for i = 1, n do
    local id = ids[i]
    if cache[id] then
      duplicate(i)
    else
      seq = seq + 1
      local low = seq % 256
      if low == 0 then high = struct.pack(">I5", seq / 256) end
      local b = byte[low]
      if b == nil then
        b = string.char(low)
        byte[low] = b
      end
      rawWrites[w + 1] = id
      rawWrites[w + 2] = head .. high .. b .. tail .. texts[i]
      w = w + 2
      if toList then
        listed = listed + 1
        listAppend[listed] = id
      else
        prioAdd[#prioAdd + 1] = -sharedPrio
        prioAdd[#prioAdd + 1] = pmember(NOW, seq, id)
      end
      cache[id] = CREATED
      if track then created[#created + 1] = id end
      if result then result[i] = 1 end
    end
  end
  meta.wl = meta.wl + listed - listedBefore
  meta.seq = seq
  metaDirty = true
else
  for i = 1, n do
    local id = ids[i]
    if cache[id] then
      duplicate(i)
    else
      local prio, runAt, publishedAt
      if shared then
        prio, runAt, publishedAt = sharedPrio, sharedRunAt, sharedPublishedAt
      else
        prio = tonumber(ARGV[6 + 5 * i]) or 0
        runAt = tonumber(ARGV[7 + 5 * i])
        publishedAt = tonumber(ARGV[8 + 5 * i]) or NOW
      end
      meta.seq = meta.seq + 1
      metaDirty = true
      local rec
      if runAt and runAt > NOW then
        rec = {
          state = DELAYED, attempt = 0, stalls = 0, token = 0, exp = 0, res = 0, fin = 0,
          due = runAt, prio = prio, seq = meta.seq, flags = 0, hcount = 0,
          body = struct.pack(PREFIX, prio, meta.seq, NOW, publishedAt) .. texts[i],
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
        rawWrites[w + 2] = struct.pack(FRESH, WAITING, prio, meta.seq, NOW, publishedAt)
          .. texts[i]
        makeWaiting(id, rec)
      end
      w = w + 2
      cache[id] = rec
      if track then created[#created + 1] = id end
      if result then result[i] = 1 end
    end
  end
end

if LIFECYCLE then
  for i = 1, #created do lifecycleEvent("published", created[i]) end
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
if events then publishEvent("put", created) end
return result or n
