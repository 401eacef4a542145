-- tasklane: move-out — step 1 of a move (capability move; docs/adapter-contract.md, "move"):
-- mark jobs of this lane moving to the target. A marked job is in no structure of the lane
-- (never handed out; an active one's lock is fenced: "lost"), keeps its record (get shows
-- it in its state before) and notes the move (target, token, state before) with its
-- results and reports in KEYS[14] (bundle field m, see REPORTS). Its holder, and watchers,
-- learn it from a "put" event naming the target. A job marked by an earlier, interrupted
-- move continues that move (to its first target, with its token).
-- KEYS: the eighteen lane keys (see _common.lua)
-- ARGV: common 1..6; ARGV[7] target lane; ARGV[8] move token; then 2 per job: id, "1" when
--       the target already holds a job with this id ("" otherwise)
-- Returns: 2 per job: status (1 marked, 0 not found, 2 finished, 3 duplicate, 4 blocked:
--          its dependencies point at it here, see FLOWS) and, when
--          marked, JSON of what the target needs (see move-in.lua): the job as it will be
--          there, its target and token.

maintainNow()

local target, token = ARGV[7], ARGV[8]
local ids, inTarget = {}, {}
for i = 9, #ARGV, 2 do
  ids[#ids + 1] = ARGV[i]
  inTarget[#ids] = ARGV[i + 1] == "1"
end
load(ids)
local stored = redis.call("HMGET", KR, unpack(ids))
local expiries = expiriesOf(ids)
-- their fair groups go along (FAIR GROUPS in _common.lua)
local groups = meta.qj and redis.call("HMGET", string.sub(KM, 1, -2) .. "gj", unpack(ids)) or {}

local out = {}
local pRem, dRem, aRem, fRem, entombed, marked = {}, {}, {}, {}, {}, {}
local unfailed = {}
local sets = {}
for i = 1, #ids do
  local id = ids[i]
  local rec = cache[id]
  local bundle = nil
  if stored[i] and string.byte(stored[i], 1) == 0 then
    local ok, b = pcall(cjson.decode, string.sub(stored[i], 2))
    if ok and type(b) == "table" then bundle = b end
  end
  local state = rec and not rec.bad and rec.state
  local m = bundle and type(bundle.m) == "table" and bundle.m
  if not state then
    out[#out + 1] = 0
    out[#out + 1] = ""
  elseif state == MOVING and m then
    -- an interrupted move: continue it as it was
    out[#out + 1] = 1
    out[#out + 1] = m.j
  elseif state == SUCCEEDED or state == CANCELED or state == EXPIRED or state == MOVING then
    out[#out + 1] = 2
    out[#out + 1] = ""
  elseif state == BLOCKED then
    out[#out + 1] = 4
    out[#out + 1] = ""
  elseif inTarget[i] then
    out[#out + 1] = 3
    out[#out + 1] = ""
  else
    expand(rec)
    -- out of its structure
    if state == WAITING then
      if rec.prio == 0 and rec.flags ~= 2 then
        meta.wl = meta.wl - 1
        metaDirty = true
        entombed[#entombed + 1] = id
      else
        pRem[#pRem + 1] = pmember(rec.due, rec.seq, id)
      end
    elseif state == DELAYED then
      dRem[#dRem + 1] = id
    elseif state == ACTIVE then
      aRem[#aRem + 1] = id
    else
      fRem[#fRem + 1] = id
      unfailed[#unfailed + 1] = failureMember(id, rec)
    end
    -- What the target makes of it: an active job is due now and its interrupted delivery
    -- does not count; a failed one leaves the dead letter set as with retryFailed.
    local job = {
      text = textOf(rec), prio = rec.prio, pub = publishedAtOf(rec), attempt = rec.attempt,
      due = rec.due, delayed = state == DELAYED, err = rec.err or "", k = token, t = target,
    }
    if state == ACTIVE then
      job.attempt = math.max(0, rec.attempt - 1)
      job.due = NOW
    elseif state == FAILED then
      job.attempt = 0
      job.due = NOW
    end
    -- its expiry goes along (a failed one's is cleared, as by retryFailed)
    if expiries[id] and state ~= FAILED then job.e = expiries[id] end
    if groups[i] then job.q = groups[i] end
    -- its history, written out (see note()), as { at, event, detail } entries
    local hist = {}
    if rec.hcount == 0 then
      local implied = impliedHistory(rec)
      for k = 1, #implied do hist[k] = { implied[k][1], implied[k][2], "" } end
    else
      local pos = 1
      for _ = 1, rec.hcount do
        local at, ev, len, nextPos = struct.unpack(HIST_ENTRY, rec.hist, pos)
        hist[#hist + 1] = { at, ev, string.sub(rec.hist, nextPos, nextPos + len - 1) }
        pos = nextPos + len
      end
    end
    job.h = hist
    -- its flow links go along (FLOWS): the jobs waiting for it learn of its end there
    if meta.f then
      local links = redis.call("HGET", flowKey("fl"), id)
      if links then job.fl = links end
    end
    if stored[i] then
      -- its result and reports go along (without the move's own note)
      job.r = stored[i]
    end
    local text = cjson.encode(job)
    bundle = bundle or (stored[i] and { r = stored[i] }) or {}
    bundle.m = { s = state, j = text }
    sets[#sets + 1] = id
    sets[#sets + 1] = "\0" .. cjson.encode(bundle)
    rec.state = MOVING
    rec.flags = 0
    touch(id, rec)
    marked[#marked + 1] = id
    out[#out + 1] = 1
    out[#out + 1] = text
  end
end

if #pRem > 0 then redis.call("ZREM", KP, unpack(pRem)) end
if #dRem > 0 then redis.call("ZREM", KD, unpack(dRem)) end
if #aRem > 0 then redis.call("ZREM", KA, unpack(aRem)) end
if #fRem > 0 then
  redis.call("ZREM", KF, unpack(fRem))
  redis.call("ZREM", KEYS[18], unpack(unfailed))
end
entomb(entombed)
if #sets > 0 then
  redis.call("HSET", KR, unpack(sets))
  markOps("r", 1)
end
flushAll()
if #marked > 0 and CHANNEL ~= "" then
  -- The holders abort, watchers learn the job left (see the adapter's dispatch).
  redis.call("PUBLISH", CHANNEL, cjson.encode({ t = "put", q = LANE, ids = marked, to = target }))
end
return out
