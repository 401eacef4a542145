-- tasklane: ack — active jobs whose lock is current go to succeeded.
-- KEYS: the eleven queue keys (see _common.lua)
-- ARGV: common 1..6; then 2 per lock: id, token
-- Returns: one integer per lock: 1 ok, 2 canceled, 0 lost.

if (#ARGV - 6) % 2 ~= 0 then
  return redis.error_reply("TASKLANE_BAD_ARGUMENT ack takes 2 arguments per item")
end

local ids = {}
for i = 7, #ARGV, 2 do ids[#ids + 1] = ARGV[i] end
load(ids)

local result = {}
local done = {}
for i = 1, #ids do
  local id = ids[i]
  local rec = cache[id]
  local status = lockStatus(rec, ARGV[6 + 2 * i])
  result[i] = status
  if status == 1 then
    runSamples[#runSamples + 1] = NOW - rec.res
    finish(id, rec, SUCCEEDED)
    -- with no explicit history, "succeeded" is implied by the state (see note())
    if rec.hcount > 0 then note(rec, EV_SUCCEEDED) end
    touch(id, rec)
    done[#done + 1] = id
  end
end

if #done > 0 then
  -- Shrinking write first: acks go through even when Redis is out of memory.
  redis.call("ZREM", KA, unpack(done))
  flushRecords()
  flushFinished()
  flushStats()
  retention()
  -- A freed concurrency slot may let a blocked worker take a job.
  if MAX_CONC > 0 and waitingCount() > 0 then wake() end
end
return result
