-- tasklane: release — hand active jobs back, due again at once and at their place (their due
-- time stays), or delayed until a runAt given (ctx.retryAfter), without counting the delivery.
-- KEYS: the eighteen lane keys (see _common.lua)
-- ARGV: common 1..6; ARGV[7] "" (every job due at once) or one ">d" runAt per lock (0: due
--       at once); then the locks' ids, then their tokens packed (see lockIds). With
--       reports: ARGV[8] "", ARGV[9] the lane's logLimit, then one report per lock ("" =
--       none; see REPORTS in _common.lua), then the ids and tokens.
-- Returns: one integer per lock: 1 ok, 2 canceled, 0 lost. A lock named again in the call is
-- lost after its first use (the job stays active until the end of the call).

local runAts = ARGV[7]
local reportsAt, n = nil, 0
if ARGV[8] == "" then
  reportsAt = 10
  n = (#ARGV - 10) / 2
end
local ids, _, tokens = lockIds(reportsAt and 10 + n or 8)
if ids == nil or n ~= math.floor(n) or (#runAts > 0 and #runAts ~= 8 * #ids) then
  return redis.error_reply(
    "TASKLANE_BAD_ARGUMENT release takes runAts, reports, ids, then one packed token per id")
end
load(ids)
-- a job handed back past its expiry expires instead (EXPIRY)
local expiries = expiriesOf(ids)

local result = {}
local done = {}
local back = {}
local used = {}
local delayedAdd = {}
local earliest = nil
for i = 1, #ids do
  local id = ids[i]
  local rec = cache[id]
  local status = lockStatus(rec, tokenAt(tokens, i))
  if status == 1 then
    if used[id] then status = 0 else used[id] = true end
  end
  result[i] = status
  if status == 1 then
    -- The next reserve hands out the same attempt number again. Its due time stays: it
    -- has waited already, so it goes back to its place (LATE ARRIVALS).
    rec.attempt = rec.attempt - 1
    note(rec, EV_RELEASED)
    lifecycleEvent("released", id)
    local at = 0
    if #runAts > 0 then at = struct.unpack(">d", runAts, 8 * i - 7) end
    done[#done + 1] = id
    done[id] = i
    if (expiries[id] or math.huge) <= NOW then
      expireJob(id, rec)
    elseif at > NOW then
      -- ctx.retryAfter: delayed until runAt, which becomes its due time.
      rec.due = at
      rec.state = DELAYED
      delayedAdd[#delayedAdd + 1] = at
      delayedAdd[#delayedAdd + 1] = id
      if earliest == nil or at < earliest then earliest = at end
      touch(id, rec)
    else
      back[#back + 1] = { id, rec }
      touch(id, rec)
    end
  end
end

if #done > 0 then
  redis.call("ZREM", KA, unpack(done))
  if reportsAt then
    local doneReports = {}
    for k = 1, #done do doneReports[k] = ARGV[reportsAt + done[done[k]] - 1] end
    storeReports(done, doneReports, nil, tonumber(ARGV[9]))
  end
  maintain()
  local wasEmpty = meta.wl == 0 and #listAppend == 0 and redis.call("ZCARD", KP) == 0
  for i = 1, #back do makeWaiting(back[i][1], back[i][2]) end
  flushRecords()
  if (#back > 0 and wasEmpty) or MAX_CONC > 0 or meta.q then wake() end
  flushWaiting()
  if earliest ~= nil then
    lowerDelayedBound(earliest)
    wakeIfEarliest(earliest)
    redis.call("ZADD", KD, unpack(delayedAdd))
  end
  flushMeta()
  flushStats()
  if #finishedAdds[FAILED] > 0 or finishedAdds[EXPIRED] then
    flushFinished()
    retention()
  end
end
return result
