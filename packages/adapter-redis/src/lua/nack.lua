-- tasklane: nack — a failed attempt: back to delayed/waiting at runAt, or dead (failed).
-- KEYS: the eighteen lane keys (see _common.lua)
-- ARGV: common 1..6; then 5 per item: id, token, runAt ("" = dead), error JSON,
--       history detail (error message for a retry, reason for a dead job); then, when
--       items carry reports, the lane's logLimit and the reports as a JSON array of one
--       text per item ("" = none; see REPORTS in _common.lua)
-- Returns: one integer per item: 1 ok, 2 canceled, 0 lost. A lock named again in the call
-- is lost after its first use (a due retry stays active until the end of the call).

local nargs = #ARGV
local reports, logLimit = nil, nil
if (nargs - 6) % 5 == 2 then
  local ok, list = pcall(cjson.decode, ARGV[nargs])
  reports = ok and type(list) == "table" and list or {}
  logLimit = tonumber(ARGV[nargs - 1]) or 100
  nargs = nargs - 2
end
if (nargs - 6) % 5 ~= 0 then
  return redis.error_reply("TASKLANE_BAD_ARGUMENT nack takes 5 arguments per item")
end

local ids = {}
for i = 7, nargs, 5 do ids[#ids + 1] = ARGV[i] end
load(ids)
-- a retry due past the job's expiry expires instead (EXPIRY)
local expiries = expiriesOf(ids)

local result = {}
local done = {}
local delayedAdd = {}
local earliest = nil
local retryNow = {}
local used = {}
for i = 1, #ids do
  local at = 7 + (i - 1) * 5
  local id = ids[i]
  local rec = cache[id]
  local status = lockStatus(rec, tonumber(ARGV[at + 1]))
  if status == 1 then
    if used[id] then status = 0 else used[id] = true end
  end
  result[i] = status
  if status == 1 then
    runSamples[#runSamples + 1] = NOW - rec.res
    expand(rec).err = ARGV[at + 3]
    done[#done + 1] = id
    done[id] = i
    local runAt = tonumber(ARGV[at + 2])
    if runAt == nil then
      statFailures = statFailures + 1
      finish(id, rec, FAILED)
      note(rec, EV_FAILED, ARGV[at + 4])
      lifecycleEvent("failed", id)
    else
      statRetries = statRetries + 1
      note(rec, EV_RETRYING, ARGV[at + 4])
      lifecycleEvent("retrying", id)
      -- due at its runAt, also when that has passed: it takes its place by it
      rec.due = runAt
      if (expiries[id] or math.huge) <= NOW then
        expand(rec)
        expireJob(id, rec)
      elseif runAt > NOW then
        rec.state = DELAYED
        delayedAdd[#delayedAdd + 1] = runAt
        delayedAdd[#delayedAdd + 1] = id
        if earliest == nil or runAt < earliest then earliest = runAt end
      else
        retryNow[#retryNow + 1] = { id, rec }
      end
    end
    touch(id, rec)
  end
end

if #done > 0 then
  redis.call("ZREM", KA, unpack(done))
  if reports then
    -- the reports of the items settled (index of each id in the call)
    local doneReports = {}
    for k = 1, #done do doneReports[k] = reports[done[done[k]]] end
    storeReports(done, doneReports, nil, logLimit)
  end
  -- Due retries join the waiting jobs after any due delayed ones (due order).
  maintain()
  local wasEmpty = meta.wl == 0 and #listAppend == 0 and redis.call("ZCARD", KP) == 0
  for i = 1, #retryNow do makeWaiting(retryNow[i][1], retryNow[i][2]) end
  flushRecords()
  if wasEmpty and #listAppend + #prioAdd > 0 then wake() end
  flushWaiting()
  if earliest ~= nil then
    lowerDelayedBound(earliest)
    wakeIfEarliest(earliest)
    redis.call("ZADD", KD, unpack(delayedAdd))
  end
  flushMeta()
  flushFinished()
  flushStats()
  retention()
  if (MAX_CONC > 0 or meta.q) and waitingCount() > 0 then wake() end
end
-- FLOWS: ends queued in the outbox (see _common.lua): Node delivers them now
if meta.fq then result[#result + 1] = "flows" end
return result
