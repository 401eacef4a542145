-- tasklane: reserve — reclaim expired leases, promote due delayed jobs, then take up to
-- `limit` due jobs (priority desc, due asc, put order), each with a fresh fencing token.
-- KEYS: the eleven queue keys (see _common.lua)
-- ARGV: common 1..6; ARGV[7] limit; ARGV[8] leaseMs
-- Returns: { ready, nextInMs (-1: nothing scheduled), then 11 per job: id, task, payload,
--   appData ("" none / "=" .. text), priority, attempt, publishedAt, readyAt, token,
--   expiresAt, malformed ("" or the reason) }

maintain()
flushWaiting()

local limit = tonumber(ARGV[7])
local lease = tonumber(ARGV[8])
local out = { 0, -1 }
local leases = {}
local taken = 0
local active = 0
local pn = 0

local MALFORMED = "the stored job record is not one tasklane wrote (undecodable)"

local function take(id, rec, malformed)
  rec[F_ATTEMPT] = rec[F_ATTEMPT] + 1
  meta.tok = meta.tok + 1
  metaDirty = true
  rec[F_STATE] = ACTIVE
  rec[F_TOKEN] = tostring(meta.tok)
  rec[F_EXP] = NOW + lease
  rec[F_RES] = NOW
  local due = dueOf(rec)
  waitSamples[#waitSamples + 1] = NOW - due
  note(rec, EV_RESERVED)
  touch(id, rec)
  leases[#leases + 1] = rec[F_EXP]
  leases[#leases + 1] = id
  taken = taken + 1
  local app = rec[F_APPDATA]
  if type(app) == "string" then app = "=" .. app else app = "" end
  out[#out + 1] = id
  out[#out + 1] = rec[F_TASK]
  out[#out + 1] = rec[F_PAYLOAD]
  out[#out + 1] = app
  out[#out + 1] = rec[F_PRIO]
  out[#out + 1] = rec[F_ATTEMPT]
  out[#out + 1] = rec[F_PUTAT] - rec[F_PUBD]
  out[#out + 1] = due
  out[#out + 1] = rec[F_TOKEN]
  out[#out + 1] = rec[F_EXP]
  out[#out + 1] = malformed or ""
end

-- A record a foreign writer corrupted is still handed out (core dead-letters it as
-- "malformed"); its raw bytes become the payload so nothing is lost.
local function takeBad(id, bad)
  local rec = { ACTIVE, "", bad.bad, false, 0, 0, 0, 0, NOW, 0, 0 }
  take(id, rec, MALFORMED)
end

local room = 0
if not meta.paused then
  room = limit
  if MAX_CONC > 0 then
    active = redis.call("ZCARD", KA)
    room = math.min(room, MAX_CONC - active)
  end
  pn = redis.call("ZCARD", KP)

  local function takeFromP(minScore, maxScore)
    if room <= 0 or pn == 0 then return end
    local members = redis.call("ZRANGEBYSCORE", KP, minScore, maxScore, "LIMIT", 0, room)
    if #members == 0 then return end
    redis.call("ZREM", KP, unpack(members))
    pn = pn - #members
    local ids = {}
    for i = 1, #members do ids[i] = string.sub(members[i], 26) end
    load(ids)
    for i = 1, #ids do
      local rec = cache[ids[i]]
      if rec and rec.bad then
        takeBad(ids[i], rec)
        room = room - 1
      elseif rec and rec[F_STATE] == WAITING then
        take(ids[i], rec)
        room = room - 1
      end
    end
  end

  takeFromP("-inf", "(0")

  local rounds = 0
  while room > 0 and meta.wl > 0 and rounds < 16 do
    rounds = rounds + 1
    local ids = redis.call("LPOP", KW, room)
    if not ids then
      meta.wl = 0
      metaDirty = true
      break
    end
    meta.lp = meta.lp + #ids
    metaDirty = true
    load(ids)
    for i = 1, #ids do
      local rec = cache[ids[i]]
      if rec and rec.bad then
        takeBad(ids[i], rec)
        room = room - 1
        meta.wl = meta.wl - 1
      elseif rec and rec[F_STATE] == WAITING and rec[F_PRIO] == 0 then
        take(ids[i], rec)
        room = room - 1
        meta.wl = meta.wl - 1
      end
      -- anything else is a tombstone (canceled or deleted while waiting)
    end
  end
  if meta.wl < 0 then meta.wl = 0 end

  takeFromP("(0", "+inf")
end

flushRecords()
if #leases > 0 then redis.call("ZADD", KA, unpack(leases)) end
flushMeta()
flushStats()
if #finishedAdds[FAILED] > 0 then
  flushFinished()
  retention()
end

local ready = 0
if not meta.paused then
  ready = meta.wl + pn
  if MAX_CONC > 0 then ready = math.max(0, math.min(ready, MAX_CONC - active - taken)) end
end
out[1] = ready
if taken > 0 and ready > 0 then
  -- Other idle workers may be blocked: pass the wake-up on.
  wake()
end
if taken == 0 then
  local nextAt = nil
  local d = redis.call("ZRANGE", KD, 0, 0, "WITHSCORES")
  if d[2] then nextAt = tonumber(d[2]) end
  local a = redis.call("ZRANGE", KA, 0, 0, "WITHSCORES")
  if a[2] and (nextAt == nil or tonumber(a[2]) < nextAt) then nextAt = tonumber(a[2]) end
  if nextAt ~= nil then out[2] = math.max(0, nextAt - NOW) end
end
return out
