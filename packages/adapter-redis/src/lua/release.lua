-- tasklane: release — hand active jobs back, due again at once and at their place (their due
-- time stays), without counting the delivery.
-- KEYS: the sixteen lane keys (see _common.lua)
-- ARGV: common 1..6; then the locks' ids, then their tokens packed (see lockIds). With
--       reports: ARGV[7] "", ARGV[8] the lane's logLimit, then one report per lock ("" =
--       none; see REPORTS in _common.lua), then the ids and tokens.
-- Returns: one integer per lock: 1 ok, 2 canceled, 0 lost. A lock named again in the call is
-- lost after its first use (the job stays active until the end of the call).

local reportsAt, n = nil, 0
if ARGV[7] == "" then
  reportsAt = 9
  n = (#ARGV - 9) / 2
end
local ids, _, tokens = lockIds(reportsAt and 9 + n or 7)
if ids == nil or n ~= math.floor(n) then
  return redis.error_reply(
    "TASKLANE_BAD_ARGUMENT release takes ids, then one packed token per id")
end
load(ids)
-- a job handed back past its expiry expires instead (EXPIRY)
local expiries = expiriesOf(ids)

local result = {}
local done = {}
local back = {}
local used = {}
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
    touch(id, rec)
    done[#done + 1] = id
    done[id] = i
    if (expiries[id] or math.huge) <= NOW then
      expireJob(id, rec)
    else
      back[#back + 1] = { id, rec }
    end
  end
end

if #done > 0 then
  redis.call("ZREM", KA, unpack(done))
  if reportsAt then
    local doneReports = {}
    for k = 1, #done do doneReports[k] = ARGV[reportsAt + done[done[k]] - 1] end
    storeReports(done, doneReports, nil, tonumber(ARGV[8]))
  end
  maintain()
  local wasEmpty = meta.wl == 0 and #listAppend == 0 and redis.call("ZCARD", KP) == 0
  for i = 1, #back do makeWaiting(back[i][1], back[i][2]) end
  flushRecords()
  if wasEmpty or MAX_CONC > 0 then wake() end
  flushWaiting()
  flushMeta()
  flushStats()
  if #finishedAdds[FAILED] > 0 or finishedAdds[EXPIRED] then
    flushFinished()
    retention()
  end
end
return result
