-- tasklane: reserve — reclaim expired leases, promote due delayed jobs, then take up to
-- `limit` due jobs (priority desc, due asc, put order; on a lane with groups one group at a
-- time, round-robin: FAIR GROUPS in _common.lua), each with a fresh fencing token.
-- KEYS: the eighteen lane keys (see _common.lua); on a lane with a rate limit also KEYS[19],
--   its log of starts (see RATE LIMIT below)
-- ARGV: common 1..6; ARGV[7] limit; ARGV[8] leaseMs; ARGV[9] startNow (absent: limit): the
--   jobs taken after the first startNow are prefetched, unless suspects; with KEYS[19]:
--   ARGV[10] the rate limit's max, ARGV[11] its durationMs
-- Returns: { ready, nextAt (when ready is 0: when, by TIME, a delayed job falls due, a
--   lease runs out or the rate limit lets a waiting job start; -1 when nothing is
--   scheduled, ready > 0 or paused), first token, expiresAt
--   (TIME + leaseMs: the caller learns TIME from it), then 7 per
--   job: id, text (see _common.lua; the raw record when malformed), priority, attempt
--   (negated for a suspect: a job whose lease ran out before, stalled or skipped),
--   publishedAt, readyAt, malformed ("" or the reason) }. Jobs are taken in reply order
--   and each takes the next fencing token, so the k-th job (from 0) holds first token + k;
--   every lease of one call ends at expiresAt.

maintain()
flushWaiting()

local limit = tonumber(ARGV[7])
local lease = tonumber(ARGV[8])
-- Jobs taken before this many start at once (see the header); nil: all of them.
local startNow = ARGV[9] and tonumber(ARGV[9])
local exp = NOW + lease
-- Every lease taken in this call ends at the same time: its score text is made once.
local expText = string.format("%d", exp)
-- Fencing tokens must never repeat, also after a failover: a promoted replica's counter may
-- have lost the old master's last increments (asynchronous replication). So a call's first
-- token is max(counter + 1, NOW * 1024), and its jobs take the next ones: a promoted
-- replica issues tokens above every token issued before the crash as long as its clock is
-- not behind the old master's by more than the failover took (README, Redis Cluster).
-- NOW * 1024 stays an exact double until the year 2248.
if meta.tok < NOW * 1024 then meta.tok = NOW * 1024 - 1 end
local out = { 0, -1, meta.tok + 1, exp }
local leases = {}
local taken = 0
local active = 0
local pn = 0
-- FAIR GROUPS: what the groups could still hand out (nil: not counted, see below)
local groupsReady = nil
-- GROUP WINDOWS (see _common.lua), on a lane whose groups have a rate limit: the lane's
-- tag, each group's starts left this call, and the tokens this call started per group.
local win = nil

-- RATE LIMIT. At most ARGV[10] jobs handed out in any window of ARGV[11] ms: KEYS[19] is a
-- zset of the starts of the last window (score: the TIME of the call that handed the job
-- out, member: its fencing token, unique in the lane). A call drops the starts older than
-- the window, takes at most max minus what is left, and logs its own. Every window that
-- ends at a start then holds at most max starts, so every window does. A lane without a
-- limit gets no KEYS[19] and pays nothing here.
local KRL = KEYS[19]
local rateMax, rateMs, rateCount = 0, 0, 0

local MALFORMED = "the stored job record is not one tasklane wrote (undecodable)"

local o = 4
local consider

-- Hand one job out: the next fencing token (returned), this call's lease, the wait sample
-- and the reply row. Both ways of taking a job (take(), takeFresh()) end here.
local function handOut(id, text, prio, attempt, publishedAt, due, malformed)
  if LIFECYCLE then lifecycleEvent("started", id) end
  meta.tok = meta.tok + 1
  metaDirty = true
  waitSamples[#waitSamples + 1] = NOW - due
  leases[#leases + 1] = expText
  leases[#leases + 1] = id
  taken = taken + 1
  out[o + 1] = id
  out[o + 2] = text
  out[o + 3] = prio
  out[o + 4] = attempt
  out[o + 5] = publishedAt
  out[o + 6] = due
  out[o + 7] = malformed
  o = o + 7
  return meta.tok
end

local function take(id, rec, text, malformed)
  -- A first reservation with no explicit history is implied by reservedAt (see note()).
  if rec.hcount > 0 or rec.res > 0 then note(rec, EV_RESERVED) end
  rec.attempt = rec.attempt + 1
  rec.state = ACTIVE
  rec.flags = 0
  -- A suspect counts as started whatever startNow says (see the contract).
  local suspect = rec.stalls > 0 or rec.skip
  rec.pre = not suspect and startNow ~= nil and taken >= startNow
  rec.token = handOut(id, text or textOf(rec), rec.prio, suspect and -rec.attempt or rec.attempt,
    publishedAtOf(rec), rec.due, malformed or "")
  rec.exp = exp
  rec.res = NOW
  touch(id, rec)
end

-- A record a foreign writer corrupted is still handed out (core dead-letters it as
-- "malformed"); it is rewritten as a valid record whose text is the raw bytes, so
-- nothing is lost and the fenced ack/nack work on it.
local function takeBad(id, raw)
  local rec = {
    state = ACTIVE, attempt = 0, stalls = 0, token = 0, exp = 0, res = 0, fin = 0, due = NOW,
    prio = 0, seq = 0, flags = 0, hcount = 0, body = struct.pack(PREFIX, 0, 0, NOW, NOW) .. raw,
    err = false, hist = "",
  }
  take(id, rec, raw, MALFORMED)
end

-- Fast path for the common candidate: a fresh or by-ref record (as put, never handed out)
-- that this call has not read before. It becomes an extended record straight from its
-- bytes, with no record table, no cache bookkeeping and no encode(). Anything else returns
-- false and goes through consider().
local nf = #rawWrites
-- The header's first part is the same for every job this call takes fresh: active,
-- attempt 1, no stalls, flags, history or error, not finished, this call's lease.
local takenHead = struct.pack(HEADER_FIXED, 64 + ACTIVE, 1, 0, 0, 0, 0, 0, exp, NOW)
-- The same for a prefetched one (flags 4), made when first needed.
local prefetchedHead
local TAKEN = { state = ACTIVE, prio = 0, hcount = 0 }
local function headFor()
  if startNow == nil or taken < startNow then return takenHead end
  if not prefetchedHead then
    -- takenHead with flags (its 6th byte) 4
    prefetchedHead = string.sub(takenHead, 1, 5) .. "\4" .. string.sub(takenHead, 7)
  end
  return prefetchedHead
end
local function takeFresh(id, raw, prio0)
  if cache[id] ~= nil or not raw then return false end
  local kind = string.byte(raw, 1)
  if kind == BY_REF then
    if #raw <= REF_LEN then return false end
    local ref = string.sub(raw, 4, REF_LEN)
    local c = callHeader(ref)
    if not c or (prio0 and c.prio ~= 0) then return false end
    -- the fresh record's body (see decode()) follows the header: one pack for both
    local text = string.sub(raw, REF_LEN + 1)
    local head = headFor()
    local token = handOut(id, text, c.prio, 1, c.pub, c.putAt, "")
    cache[id] = TAKEN
    rawWrites[nf + 1] = id
    rawWrites[nf + 2] = head .. struct.pack(REST_PREFIX, token, c.putAt, PREFIX_LEN + #text,
      c.prio, c.seq + struct.unpack(">I2", raw, 2), c.putAt, c.pub) .. text
    nf = nf + 2
    deref(ref)
    return true
  end
  if kind ~= WAITING or #raw <= PREFIX_LEN + 1 then return false end
  local prio, seq, putAt, pub = struct.unpack(PREFIX, raw, 2)
  if not plausible(seq, putAt) or (prio0 and prio ~= 0) then return false end
  local head = headFor()
  local token = handOut(id, string.sub(raw, PREFIX_LEN + 2), prio, 1, pub, putAt, "")
  -- the same id popped again in this call (a tombstone of it) finds it active
  cache[id] = TAKEN
  rawWrites[nf + 1] = id
  rawWrites[nf + 2] = head .. struct.pack(HEADER_REST, token, putAt, #raw - 1)
    .. string.sub(raw, 2)
  nf = nf + 2
  return true
end

-- Read the records of popped candidates; the ones takeFresh() leaves are decoded into the
-- cache for consider() (prio0: popped from the list). Returns how many were taken.
local function takeAll(ids, prio0)
  local raws = redis.call("HMGET", KJ, unpack(ids))
  local n = 0
  for i = 1, #ids do
    local id, raw = ids[i], raws[i]
    if takeFresh(id, raw, prio0) then
      n = n + 1
    else
      if cache[id] == nil then remember(id, raw) end
      if consider(id, prio0) then n = n + 1 end
    end
  end
  return n
end

-- Take one candidate popped from a waiting structure (prio0: from the list, where a
-- priority-0 job that arrived late, flags 2, is not: its entry there is a tombstone).
function consider(id, prio0)
  local rec = cache[id]
  if not rec then return false end
  if rec.bad then
    takeBad(id, rec.bad)
    return true
  end
  if rec.state ~= WAITING or (prio0 and (rec.prio ~= 0 or rec.flags == 2)) then
    return false
  end
  take(id, rec)
  return true
end

local room = 0
if not meta.paused then
  room = limit
  if MAX_CONC > 0 then
    active = redis.call("ZCARD", KA)
    room = math.min(room, MAX_CONC - active)
  end
  if KRL then
    rateMax, rateMs = tonumber(ARGV[10]), tonumber(ARGV[11])
    redis.call("ZREMRANGEBYSCORE", KRL, "-inf", NOW - rateMs)
    rateCount = redis.call("ZCARD", KRL)
    room = math.min(room, rateMax - rateCount)
  end
  pn = redis.call("ZCARD", KP)

  -- FAIR GROUPS (see _common.lua): a grouped lane takes its jobs through its groups' ring
  -- and spends the room, so the plain way below takes nothing. With the ring empty it
  -- takes the plain way: jobs that waited before the lane had groups.
  if meta.q and room > 0 then
    room = (function()
      local tag = string.sub(KM, 1, -2)
      local KQR = tag .. "gr"
      local ringLen = redis.call("LLEN", KQR)
      if ringLen == 0 then return room end
      local limit = meta.q > 0 and meta.q or math.huge
      local act = meta.q > 0 and groupTally(tag) or {}
      local roomOf = nil
      if meta.qr then
        win = { tag = tag, room = {}, started = {} }
        roomOf = function(g)
          local r = win.room[g]
          if r == nil then
            r = groupWindowRoom(tag .. "gw:" .. g, NOW, meta.qr, meta.qrMs)
            win.room[g] = r
          end
          return r
        end
        win.roomOf = roomOf
      end
      -- a group at its limit (or, with GROUP WINDOWS, with no start left in its window)
      -- is passed over (looked: how many in a row); an empty one leaves the ring; a stale
      -- entry is dropped and its group stays first
      local looked, stale, listed, pRem = 0, 0, {}, {}
      while room > 0 and looked < ringLen and stale < BUDGET do
        local g = redis.call("LINDEX", KQR, 0)
        if not g then break end
        if (act[g] or 0) >= limit or (roomOf and roomOf(g) <= 0) then
          redis.call("LMOVE", KQR, KQR, "LEFT", "RIGHT")
          looked = looked + 1
        else
          local key = tag .. "gq:" .. g
          local top = redis.call("ZPOPMIN", key)
          if top[1] == nil then
            redis.call("LPOP", KQR)
            ringLen = ringLen - 1
          else
            local member = top[1]
            local id = string.sub(member, 26)
            local rec = get(id)
            if rec and not rec.bad and rec.state == WAITING and -rec.prio == tonumber(top[2])
                and pmember(rec.due, rec.seq, id) == member then
              -- where it waits besides: the list (a tombstone now) or KEYS[4]
              if rec.prio == 0 and rec.flags ~= 2 then
                listed[#listed + 1] = id
              else
                pRem[#pRem + 1] = member
              end
              take(id, rec)
              room = room - 1
              act[g] = (act[g] or 0) + 1
              if win then
                -- take() gave the job the lane's newest token
                win.room[g] = win.room[g] - 1
                local started = win.started[g]
                if not started then
                  started = {}
                  win.started[g] = started
                end
                started[#started + 1] = meta.tok
              end
              looked = 0
              if redis.call("ZCARD", key) == 0 then
                redis.call("LPOP", KQR)
                ringLen = ringLen - 1
              else
                redis.call("LMOVE", KQR, KQR, "LEFT", "RIGHT")
              end
            else
              stale = stale + 1
            end
          end
        end
      end
      if #pRem > 0 then
        redis.call("ZREM", KP, unpack(pRem))
        pn = pn - #pRem
      end
      if #listed > 0 then
        entomb(listed)
        meta.wl = meta.wl - #listed
      end
      -- Trim the list's head of tombstones (and of entries whose jobs left), as the plain
      -- way pops them, so the list does not grow behind a grouped lane.
      -- (8 entries first: the head is often a live job; then more while all are dead)
      local batch = 8
      for _ = 1, 16 do
        if metaNt <= 0 and meta.wl > 0 then break end
        local ids = redis.call("LRANGE", KW, 0, batch - 1)
        batch = math.min(2 * batch, 256)
        if #ids == 0 then
          clearTombstones()
          break
        end
        local tombs = tombstonesOf(ids) or {}
        load(ids)
        local passed, popped = 0, {}
        for k = 1, #ids do
          local id = ids[k]
          local left = tombs[id]
          if left and left > 0 then
            tombs[id] = left - 1
            popped[id] = (popped[id] or 0) + 1
          else
            local r = cache[id]
            if r and (r.bad or (r.state == WAITING and r.prio == 0 and r.flags ~= 2)) then
              break
            end
          end
          passed = passed + 1
        end
        if passed > 0 then
          redis.call("LTRIM", KW, passed, -1)
          meta.lp = meta.lp + passed
          metaDirty = true
        end
        if next(popped) then unentomb(popped, tombs) end
        if passed < #ids then break end
      end
      if meta.q > 0 or roomOf then
        groupsReady = select(2, groupTally(tag, limit, act, roomOf))
      end
      return 0
    end)()
  end

  local function takeFromP(minScore, maxScore)
    if room <= 0 or pn == 0 then return end
    local members = redis.call("ZRANGEBYSCORE", KP, minScore, maxScore, "LIMIT", 0, room)
    if #members == 0 then return end
    redis.call("ZREM", KP, unpack(members))
    pn = pn - #members
    local ids = {}
    for i = 1, #members do ids[i] = string.sub(members[i], 26) end
    room = room - takeAll(ids, false)
  end

  takeFromP("-inf", "(0")

  -- Priority 0: late arrivals are in KEYS[4] with score 0, counted in pn with the other
  -- priorities; a lane with neither makes no call for them.
  local zeroDone = true
  if room > 0 and pn > 0 then
    local late = redis.call("ZRANGEBYSCORE", KP, 0, 0, "LIMIT", 0, room)
    if #late > 0 then
      -- `late` (members in order, at most room) merged with the list by (due, seq): the
      -- list is read ahead (LRANGE) and only the entries passed are removed. Decoded on
      -- the general path (this runs only while late arrivals wait).
      local n, li, gone, lateIds = #late, 1, {}, {}
      for k = 1, n do lateIds[k] = string.sub(late[k], 26) end
      load(lateIds)
      -- the list's entries passed (taken, or tombstones), and the tombstones among them
      local passed, tombs, popped, listDone = 0, {}, {}, false
      for _ = 1, 16 do
        if room <= 0 or li > n then break end
        local want = room
        local ids = meta.wl > 0 and redis.call("LRANGE", KW, passed, passed + want - 1) or {}
        if #ids == 0 then
          listDone = true
          break
        end
        -- An id's first entries while it has counted tombstones are those (TOMBSTONES).
        local unseen = {}
        for k = 1, #ids do
          if tombs[ids[k]] == nil then
            tombs[ids[k]] = 0
            unseen[#unseen + 1] = ids[k]
          end
        end
        for id, c in pairs(tombstonesOf(unseen) or {}) do tombs[id] = c end
        load(ids)
        local stop = false
        for k = 1, #ids do
          local id = ids[k]
          local rec = cache[id]
          if tombs[id] > 0 then
            tombs[id] = tombs[id] - 1
            popped[id] = (popped[id] or 0) + 1
          elseif rec and (rec.bad or (rec.state == WAITING and rec.prio == 0 and rec.flags ~= 2)) then
            -- a live job (not ours: handed out where it stands); the late arrivals due
            -- before it go first
            local due, seq = -1, -1
            if not rec.bad then due, seq = rec.due, rec.seq end
            while room > 0 and li <= n do
              local m = late[li]
              local lateDue = tonumber(string.sub(m, 1, 13))
              if lateDue > due or (lateDue == due and tonumber(string.sub(m, 14, 25)) > seq) then
                break
              end
              gone[#gone + 1] = m
              if consider(lateIds[li], false) then room = room - 1 end
              li = li + 1
            end
            -- none left to take, or no late arrival left to merge: this entry stays
            stop = room <= 0 or li > n
            if stop then break end
            if consider(id, true) then
              room = room - 1
              meta.wl = meta.wl - 1
            end
          end
          -- (anything else is a tombstone from before they were counted)
          passed = passed + 1
          if room <= 0 then
            stop = true
            break
          end
        end
        if stop then break end
        if #ids < want then
          listDone = true
          break
        end
      end
      if passed > 0 then
        redis.call("LTRIM", KW, passed, -1)
        meta.lp = meta.lp + passed
        metaDirty = true
      end
      if next(popped) then unentomb(popped, tombs) end
      -- No live job left in the list: the late arrivals follow in their order.
      while listDone and room > 0 and li <= n do
        gone[#gone + 1] = late[li]
        if consider(lateIds[li], false) then room = room - 1 end
        li = li + 1
      end
      if #gone > 0 then
        redis.call("ZREM", KP, unpack(gone))
        pn = pn - #gone
      end
      zeroDone = li > n
    end
  end

  local rounds = 0
  while zeroDone and room > 0 and meta.wl > 0 and rounds < 16 do
    rounds = rounds + 1
    local ids = redis.call("LPOP", KW, room)
    if not ids then
      meta.wl = 0
      metaDirty = true
      clearTombstones()
      break
    end
    meta.lp = meta.lp + #ids
    metaDirty = true
    -- An id's first pops while it has counted tombstones are those (TOMBSTONES), also
    -- when its record is waiting again: its place is its last one.
    local tombs = tombstonesOf(ids)
    if tombs then
      local live, popped = {}, {}
      for i = 1, #ids do
        local id = ids[i]
        local left = tombs[id]
        if left and left > 0 then
          tombs[id] = left - 1
          popped[id] = (popped[id] or 0) + 1
        else
          live[#live + 1] = id
        end
      end
      unentomb(popped, tombs)
      ids = live
    end
    -- anything else not taken is a tombstone too (canceled or deleted while waiting,
    -- from before tombstones were counted)
    local n = #ids > 0 and takeAll(ids, true) or 0
    room = room - n
    meta.wl = meta.wl - n
  end
  if meta.wl < 0 then meta.wl = 0 end

  if zeroDone then takeFromP("(0", "+inf") end
end

flushRecords()
if #leases > 0 then
  redis.call("ZADD", KA, unpack(leases))
  lowerLeaseBound(exp)
  if KRL then
    -- this call's starts: the k-th job taken (from 0) holds the first token + k
    local starts, at = {}, nowText()
    for k = 0, taken - 1 do
      starts[2 * k + 1] = at
      starts[2 * k + 2] = string.format("%d", out[3] + k)
    end
    redis.call("ZADD", KRL, unpack(starts))
  end
  if win then
    -- GROUP WINDOWS: each group's starts of this call, its log pruned to the window and
    -- kept no longer than the window
    local at = nowText()
    for g, tokens in pairs(win.started) do
      local key = win.tag .. "gw:" .. g
      local adds = {}
      for k = 1, #tokens do
        adds[2 * k - 1] = at
        adds[2 * k] = string.format("%d", tokens[k])
      end
      redis.call("ZREMRANGEBYSCORE", key, "-inf", NOW - meta.qrMs)
      redis.call("ZADD", key, unpack(adds))
      redis.call("PEXPIRE", key, meta.qrMs)
    end
  end
end
flushMeta()
flushStats()
-- Retention: states that received jobs now (stalled ones failed), ages once a second.
if flushFinished() or NOW - meta.rs >= 1000 then retention() end

local ready = 0
if not meta.paused then
  ready = meta.wl + pn
  if groupsReady then ready = math.min(ready, groupsReady) end
  if MAX_CONC > 0 then ready = math.max(0, math.min(ready, MAX_CONC - active - taken)) end
  if KRL then ready = math.max(0, math.min(ready, rateMax - rateCount - taken)) end
end
out[1] = ready
if taken > 0 and ready > 0 then
  -- Other idle workers may be blocked: pass the wake-up on.
  wake()
end
if ready == 0 and not meta.paused then
  -- When the caller blocks, it wakes by the next due time or lease expiry. The cached
  -- bounds are exact after this call's maintenance or lower (an acked lease): at worst
  -- an early wake-up, whose maintenance then refreshes them.
  local nextAt = math.min(meta.nd, meta.ne)
  local logged = rateCount + taken
  if KRL and logged >= rateMax and meta.wl + pn > 0 then
    -- Jobs wait for the window: the next may start once the start that must leave it has.
    local leaving = redis.call("ZRANGE", KRL, logged - rateMax, logged - rateMax, "WITHSCORES")
    if leaving[2] then nextAt = math.min(nextAt, tonumber(leaving[2]) + rateMs) end
  end
  if win and groupsReady == 0 then
    -- GROUP WINDOWS: jobs of groups that wait for their window only may start when its
    -- oldest start inside it leaves.
    local ring = redis.call("LRANGE", win.tag .. "gr", 0, -1)
    local act = meta.q > 0 and groupTally(win.tag) or {}
    for k = 1, #ring do
      local g = ring[k]
      if (meta.q == 0 or (act[g] or 0) < meta.q) and win.roomOf(g) <= 0 then
        local oldest = redis.call(
          "ZRANGEBYSCORE", win.tag .. "gw:" .. g, "(" .. (NOW - meta.qrMs), "+inf",
          "WITHSCORES", "LIMIT", 0, 1)
        if oldest[2] then nextAt = math.min(nextAt, tonumber(oldest[2]) + meta.qrMs) end
      end
    end
  end
  if nextAt < 1e299 then out[2] = math.max(NOW, nextAt) end
end
return out
