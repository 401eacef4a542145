-- tasklane: deliver — apply dependencies' ends to the jobs of this lane waiting for them
-- (capability flows; docs/adapter-contract.md, "Flows", steps 1-3; FLOWS in _common.lua).
-- Each end is recorded in its entry once: an entry already ended is left as it is, so a
-- notification delivered twice (a crash between this script and the outbox's cleanup)
-- counts once. A job still blocked then fails (an end other than succeeded, onFailure
-- "fail"), is unblocked ("continue", or its last entry ended) or waits on.
-- KEYS: the eighteen lane keys (see _common.lua)
-- ARGV: common 1..6; then 4 per end: the waiting job's id, the entry's index (from 0), how
--       the dependency ended, its result ("" = none: encoded JSON is never empty)
-- Returns: "flows" when this call's ends (jobs failed or expired) queued ends in turn.

maintainNow()
local ids = {}
for i = 7, #ARGV, 4 do ids[#ids + 1] = ARGV[i] end
load(ids)
local linkRaws = redis.call("HMGET", flowKey("fl"), unpack(ids))
local links, order = {}, {}
local blRem = {}
local made = false
for k = 1, #ids do
  local id = ids[k]
  local f = links[id]
  if f == nil then
    local ok, decoded = false, nil
    if linkRaws[k] then ok, decoded = pcall(cjson.decode, linkRaws[k]) end
    f = ok and type(decoded) == "table" and type(decoded.d) == "table" and decoded or false
    links[id] = f
    if f then order[#order + 1] = id end
  end
  local at = 7 + 4 * (k - 1)
  local index, state, result = tonumber(ARGV[at + 1]), ARGV[at + 2], ARGV[at + 3]
  local entry = f and index and f.d[index + 1]
  if type(entry) == "table" and entry.s == nil then
    entry.s = state
    if result ~= "" then entry.r = result end
    f.n = (tonumber(f.n) or 1) - 1
    f.changed = true
    local rec = cache[id]
    if rec and not rec.bad and rec.state == BLOCKED then
      local failed = state ~= "succeeded"
      if failed and entry.o == "fail" then
        blRem[#blRem + 1] = id
        expand(rec).err = cjson.encode({
          name = "DependencyFailedError",
          message = "Dependency " .. tostring(entry.i) .. " (" .. tostring(entry.t or "?")
            .. ", lane " .. tostring(entry.l) .. ") ended " .. state,
          reason = "dependency_failed",
        })
        finish(id, rec, FAILED)
        statFailures = statFailures + 1
        note(rec, EV_FAILED, "dependency_failed")
        lifecycleEvent("failed", id)
        touch(id, rec)
      elseif (failed and entry.o == "continue") or f.n <= 0 then
        -- unblocked: due now, or delayed until its runAt; expired if its time has passed
        blRem[#blRem + 1] = id
        note(rec, EV_UNBLOCKED)
        local e = expiriesOf({ id })[id]
        if e and e <= NOW then
          expireJob(id, rec)
        elseif rec.due > NOW then
          rec.state = DELAYED
          redis.call("ZADD", KD, rec.due, id)
          lowerDelayedBound(rec.due)
          wakeIfEarliest(rec.due)
          touch(id, rec)
        else
          rec.due = NOW
          makeWaiting(id, rec)
          touch(id, rec)
          made = true
        end
      end
    end
  end
end
local set = {}
for k = 1, #order do
  local f = links[order[k]]
  if f.changed then
    f.changed = nil
    set[#set + 1] = order[k]
    set[#set + 1] = cjson.encode(f)
  end
end
if #set > 0 then redis.call("HSET", flowKey("fl"), unpack(set)) end
if #blRem > 0 then redis.call("ZREM", flowKey("bl"), unpack(blRem)) end
flushAll()
if made then wake() end
return meta.fq and "flows" or ""
