-- tasklane: ack — active jobs whose lock is current go to succeeded.
-- KEYS: the eighteen lane keys (see _common.lua)
-- ARGV: common 1..6; then the locks' ids, then their tokens packed (see lockIds).
--       With results or reports: ARGV[7] "", ARGV[8] the lane's logLimit, then one result
--       per lock ("" = none: encoded JSON is never empty), then one report per lock (""
--       = none; see REPORTS in _common.lua), then the ids and tokens as above.
-- Returns: one integer per lock: 1 ok, 2 canceled, 0 lost.
--
-- The common ack (a current lock on a record with no stored history, each id once in the
-- call) takes a fast path: the state byte and finishedAt are patched in place and the
-- rest of the record is copied, with no record table and no cache bookkeeping. Anything
-- else (a lost or canceled lock, stored history, a malformed record, an id named twice)
-- takes the general path through decode() and lockStatus().

-- Results and reports (capabilities results, reports): ARGV[9 .. 8 + n] and
-- ARGV[9 + n .. 8 + 2n], n the number of locks.
local resultsAt, n = nil, 0
if ARGV[7] == "" then
  resultsAt = 9
  n = (#ARGV - 9) / 3
end
local ids, twice, tokens = lockIds(resultsAt and 9 + 2 * n or 7)
if ids == nil or n ~= math.floor(n) then
  return redis.error_reply("TASKLANE_BAD_ARGUMENT ack takes ids, then one packed token per id")
end

local result = {}
local done = {}
local nf = #rawWrites
local slow = {}
local adds = finishedAdds[SUCCEEDED]
local SUCCEEDED_BYTE = string.char(64 + SUCCEEDED)
local finText = struct.pack(">d", NOW)
-- the finished zset's score
local finishedAt = nowText()
local raws = redis.call("HMGET", KJ, unpack(ids))
for i = 1, #ids do
  local id = ids[i]
  local raw = raws[i]
  local ok = false
  if
    raw and not twice and string.byte(raw, 1) == 64 + ACTIVE and #raw >= HEADER_LEN
    and string.byte(raw, AT_HCOUNT) == 0
  then
    local exp, res, token = struct.unpack(">ddd", raw, AT_EXP)
    if exp > NOW and token == tokenAt(tokens, i) then
      ok = true
      result[i] = 1
      runSamples[#runSamples + 1] = NOW - res
      rawWrites[nf + 1] = id
      -- the state byte and finishedAt change; every other byte is copied
      rawWrites[nf + 2] = SUCCEEDED_BYTE .. string.sub(raw, 2, AT_FIN - 1) .. finText
        .. string.sub(raw, AT_FIN + 8)
      nf = nf + 2
      adds[#adds + 1] = finishedAt
      adds[#adds + 1] = id
      done[#done + 1] = id
      if resultsAt then done[id] = i end
    end
  end
  if not ok then
    if cache[id] == nil then remember(id, raw) end
    slow[#slow + 1] = i
  end
end

for k = 1, #slow do
  local i = slow[k]
  local id = ids[i]
  local rec = cache[id]
  local status = lockStatus(rec, tokenAt(tokens, i))
  result[i] = status
  if status == 1 then
    runSamples[#runSamples + 1] = NOW - rec.res
    finish(id, rec, SUCCEEDED)
    -- with no explicit history, "succeeded" is implied by the state (see note())
    if rec.hcount > 0 then note(rec, EV_SUCCEEDED) end
    touch(id, rec)
    done[#done + 1] = id
    if resultsAt then done[id] = i end
  end
end

if #done > 0 then
  if LIFECYCLE or meta.w then
    for i = 1, #done do lifecycleEvent("succeeded", done[i]) end
  end
  -- Shrinking write first: acks go through even when Redis is out of memory.
  redis.call("ZREM", KA, unpack(done))
  -- The results and reports of the jobs acked (done[id]: the lock's index).
  if resultsAt then
    local results, reports = {}, {}
    for k = 1, #done do
      local i = done[done[k]]
      results[k] = ARGV[resultsAt + i - 1]
      reports[k] = ARGV[resultsAt + n + i - 1]
    end
    storeReports(done, reports, results, tonumber(ARGV[8]))
    flushMeta()
  end
  flushRecords()
  flushFinished()
  flushStats()
  retention()
  -- A freed concurrency slot may let a blocked worker take a job.
  if (MAX_CONC > 0 or meta.q) and waitingCount() > 0 then wake() end
end
-- FLOWS: ends queued in the outbox (see _common.lua): Node delivers them now
if meta.fq then result[#result + 1] = "flows" end
return result
