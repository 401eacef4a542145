-- tasklane: shared prelude, prepended to every script at load time (not a script itself).
--
-- Every script receives the same eighteen keys, all under one hash tag {<prefix>:<lane>}:
--   KEYS[1]  m   meta hash: n (struct META below: wl, live ids in the waiting list; lp,
--                ids ever popped from it, for list() cursors; seq, put order; tok,
--                fencing tokens; rs, last full retention sweep; nd / ne, lower bounds of
--                the earliest delayed due time / lease expiry: maintenance skips its
--                queries before them; ops, what the lane's jobs store beyond their
--                records, bits: 1 results in KEYS[14], 2 expiries in KEYS[15], 4 tags
--                in KEYS[14] and KEYS[17], 8 flows: jobs of the lane wait for others or
--                are waited for (FLOWS), 16 groups in gj (see FAIR GROUPS), so scripts
--                read and clean those only then;
--                wu, until when somebody watches
--                the lane, see WATCHING), paused ("1")
--   KEYS[2]  j   job records: encoded id -> packed record (see JOB RECORDS below)
--   KEYS[3]  w   waiting list of priority-0 jobs in due order (ids; canceled/deleted ids stay
--                as tombstones until popped: a popped id counts only if its record is waiting)
--   KEYS[4]  p   waiting zset of jobs with priority /= 0, and of priority-0 jobs that arrived
--                late (see LATE ARRIVALS): score -priority, member
--                "<13-digit dueAt><12-digit seq><id>" (lexical order = due, then put order)
--   KEYS[5]  d   delayed zset: score dueAt, member id
--   KEYS[6]  a   active zset (leases): score expiresAt, member id
--   KEYS[7]  s   succeeded zset: score finishedAt
--   KEYS[8]  f   failed zset (dead letters): score finishedAt
--   KEYS[9]  c   canceled zset: score finishedAt
--   KEYS[10] k   wake-up list: idle workers BLPOP it; holds at most one marker
--   KEYS[11] t   stats hash: "<day number>:<field>" (wait and run summaries, failures,
--                retries; see Stats below), sd (last day)
--   KEYS[12] b   put calls' shared headers: 8-byte call ref -> struct CALL (see JOB RECORDS:
--                by reference); a field goes when no record refers to it any more
--   KEYS[13] x   tombstones: id -> how many of the waiting list's tombstones are that id
--                (metaNt: their total; see TOMBSTONES below)
--   KEYS[14] r   results and reports: id -> the handler's return value (JSON text) of a
--                succeeded job, or, once the job reported progress or log lines, "\0" then
--                JSON { r = result, p = progress, l = log lines, d = lines dropped } (see
--                REPORTS); removed with the job's record (retention, delete)
--   KEYS[15] e   expiries: score expiresAt, member id, of jobs put with one (see EXPIRY);
--                1e15 + expiresAt once it passed while the job ran
--   KEYS[16] z   expired zset (jobs that expired unstarted): score finishedAt
--   KEYS[17] g   tag index: score 0, member "<tag's byte length>:<tag>\0<id>", one per tag
--                of every job put with tags (their tags are in KEYS[14], field g); removed
--                with the job's record (see TAGS)
--   KEYS[18] h   failure index: score 0, member "<error name's byte length>:<name>\0<13-digit
--                finishedAt><id>", one per failed job (see FAILURE GROUPS)
--   (schedule and fire only) KEYS[19] sched, KEYS[20] sched:due: recurring schedules (see
--                scheduleWrite)
--   (reserve only, on a lane with a rate limit) KEYS[19] rl: the starts of the last window,
--                score TIME of the start, member the fencing token (see reserve.lua, RATE
--                LIMIT); under the lane's hash tag like every key above, so Cluster keeps
--                one slot per lane
--   (FLOWS, not KEYS: derived from KEYS[1]'s name, same hash tag) <tag>bl blocked jobs,
--                score put time, member id; <tag>fl flow links: id -> JSON of the jobs it
--                waits for and the jobs waiting for it; <tag>ob outbox: "<lane>\n<id>\n
--                <index>" -> JSON { s = how a job of this lane ended, r = its result }
--   (put only, when a job of the call has a debounce key) KEYS[19] db: "<task>\n<key>" ->
--                "<until>:<id>", KEYS[20] db:until: score until, member that field (see
--                put.lua, DEBOUNCE); same hash tag
--   Not in KEYS (built from KEYS[1]'s prefix, so under the same hash tag and slot): the
--                fair groups' gj, gr and gq:<group> (see FAIR GROUPS)
-- Common ARGV:
--   ARGV[1] lane name (for events)   ARGV[2] maxStalls  ARGV[3] historyLimit
--   ARGV[4] maxConcurrency (0 = none); on a lane opened with groups followed by "g" and
--           the groups' concurrency (0 = none), e.g. "0g2" (see FAIR GROUPS)
--   ARGV[5] retention "sAge,sCount,fAge,fCount,cAge,cCount,eAge,eCount" (-1 = no limit of
--           that kind; e: expired)
--   ARGV[6] events channel, followed by "\nlifecycle" when lifecycle events are on
-- Script-specific arguments start at ARGV[7].
--
-- Invariant: ordering of waiting jobs = (priority desc, due asc, put order). Priority-0 jobs
-- sit in a list, kept in that order: a job whose (due, seq) would not come after the
-- list's last entry goes to KEYS[4] with score 0 instead, and reserve merges the two (see
-- LATE ARRIVALS). A job's due time is its runAt (or put time), a retry's runAt, or the
-- time retryFailed ran; a release or a lease that runs out leaves it as it was.
--
-- OOM (maxmemory reached): put must be refused whole, every other writing script must run
-- (workers drain the lane). As functions, scripts.ts flags those `allow-oom`. EVAL scripts
-- are refused a memory-growing command only until they have written, so their EVAL form
-- starts with a write that changes nothing (HDEL of a field that never exists).
--
-- SECTIONS. A line "--@" starts a section. Everything before the first one goes into every
-- script; a section goes into a script only when the script, or a section it takes,
-- names one of the section's top-level locals (scripts.ts resolves this at load time).
-- Why: an EVAL script runs its whole prelude on every call, and creating ~40 closures
-- (each upvalue found by walking the open-upvalue list) cost ~115k instructions per call,
-- about 3.5 empty EVALSHAs; a one-job ack or put needs a third of them. A section may
-- refer to locals of earlier sections and to the forward-declared flush functions only.
--
-- PER-CALL BLOCKS. Lines between "--{" and "--}" set a call's state (keys, arguments,
-- TIME, the meta hash, empty work tables). The EVAL form runs them in place. The function
-- library (scripts.ts) runs the rest of the prelude once, at FUNCTION LOAD, and these
-- blocks at the start of every call, in a set-up function per script; so every local a
-- call changes is declared outside its block and assigned inside it. FUNCTION LOAD runs
-- the top level without the string, math and struct libraries: constants are literals.

-- EVAL form only (Redis 6.2 replicates a script's effects only when asked; functions always
-- do, and the library leaves this line out).
pcall(function() redis.replicate_commands() end)

local KM, KJ, KW, KP, KD, KA, KS, KF, KC, KK, KT, KB, KX
local LANE, MAX_CONC, RETENTION_SPEC, CHANNEL, LIFECYCLE
-- NOW as a score argument (NOW_TEXT): made once per call, when first needed (nowText()).
local NOW, NOW_TEXT
--{
KM, KJ, KW, KP, KD, KA = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5], KEYS[6]
KS, KF, KC, KK, KT, KB, KX = KEYS[7], KEYS[8], KEYS[9], KEYS[10], KEYS[11], KEYS[12], KEYS[13]
LANE = ARGV[1]
-- Parsing a number from text (tonumber) costs ~2,400 instructions: maxStalls (ARGV[2])
-- and historyLimit (ARGV[3]) are parsed once per call when first used (a stall, an
-- explicit history entry; maxStalls(), historyLimit()), and maxConcurrency only when it is
-- not "0".
-- -1: ARGV[4] names groups too; the meta hash's block parses it (see FAIR GROUPS).
MAX_CONC = ARGV[4] == "0" and 0 or tonumber(ARGV[4]) or -1
RETENTION_SPEC = ARGV[5]
-- A channel name ends in ":events", so the "\nlifecycle" flag cannot be part of one.
CHANNEL, LIFECYCLE = ARGV[6], false
if string.sub(CHANNEL, -10) == "\nlifecycle" then
  CHANNEL = string.sub(CHANNEL, 1, -11)
  LIFECYCLE = true
end
do
  local t = redis.call("TIME")
  NOW = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
end
NOW_TEXT = nil
--}

-- JOB RECORDS. Three layouts, told apart by the first byte:
--
--   fresh     <state 1..6> <body>                      (a job as put: waiting, never handed out)
--   by ref    <7> <index ">I2"> <call ref, 8 bytes> <text>
--                                                      (the same, as publishMany's usual call
--                                                      puts it: see below)
--   extended  <header, 55 bytes> <body> <error> <history>
--
-- body    struct ">hI6I6i6" (20 bytes): priority, seq, putAt, publishedAt (6-byte integers
--         hold epoch ms to the year 10889); then the job's text
--         as core's client made it: "<task length>:<appData length or ->:<task><appData>
--         <payload>" (lengths in UTF-16 units). Scripts read only the 20-byte prefix; the
--         text goes back to Node verbatim, which parses it (and reports a text it cannot
--         parse as malformed). Written once by put and never re-encoded.
-- header  struct ">BHHBBI4dddddI4": 64 + state, attempt, stalls, flags (1 = canceled while
--         active; 2 = waiting in KEYS[4] although of priority 0: a late arrival, see LATE
--         ARRIVALS; plus 4 = the current delivery is prefetched (reserve's startNow), 8 =
--         a prefetched delivery's lease ran out, a skip (the job is a suspect): decode()
--         keeps these two as rec.pre and rec.skip, rec.flags holds 0..2), history entries, error length, finishedAt (0 = none), expiresAt,
--         reservedAt, token, dueAt, body length. Priority and seq live in the body's prefix
--         only (they never change). The order serves the fast paths: a job reserve takes
--         fresh writes the same first 35 bytes for every job of the call and packs only
--         token, dueAt and body length; ack reads expiresAt, reservedAt and token in one
--         unpack and patches the state byte and finishedAt in place (AT_* below).
-- error   JSON text of the last error (core's JobError)
-- history entries of struct ">dBH" (at, event, detail length) followed by the detail;
--         none stored means just the implicit "published" event at putAt
-- by ref  a waiting job from a put whose jobs share priority and publishedAt, are due now
--         and have ids the client generated (put's layout "r"): the client writes the
--         whole record, and redis-server stores the bytes it was sent, with no string made
--         per job (concatenating the record's header in Lua was a large share of a big
--         put: DESIGN.md). What only redis-server knows, seq and putAt, is in the call's
--         header (KEYS[12], struct CALL: priority, the call's first seq - 1, putAt,
--         publishedAt, how many of its records are still by ref); the job's seq is that
--         base + index (1-based). Reading the record rebuilds the fresh record's body; any
--         rewrite stores the extended layout, and it and a deletion each count the call's
--         records down (deref()): the header goes with the last one. A record whose call
--         header is missing reads as not ours (malformed). 11 bytes before the text
--         instead of 21.
-- A fresh record costs 1 byte more than its body: what keeps waiting jobs small. No
-- general-purpose decoder (cmsgpack) runs on the hot path: reserve reads a fixed prefix.
-- Priority is stored as a 16-bit integer: core allows -1000..1000.
-- Formats are literals: a function library's top level runs without the string library
-- (FUNCTION LOAD), so nothing here is computed. HEADER = HEADER_FIXED then HEADER_REST.
local HEADER_FIXED = ">BHHBBI4ddd"
local HEADER_REST = ">ddI4"
local HEADER = ">BHHBBI4dddddI4"
local HEADER_LEN = 55
-- Byte positions in the header: history count, finishedAt, expiresAt (reservedAt and
-- token follow it); a test checks them against struct.size.
local AT_HCOUNT, AT_FIN, AT_EXP = 7, 12, 20
local HIST_ENTRY = ">dBH"
local PREFIX = ">hI6I6i6"
local PREFIX_LEN = 20
-- The prefix's first two fields (priority, seq): what decode() needs of an extended record.
local PREFIX_ORDER = ">hI6"
-- A by-ref record: its kind, the text's offset - 1; a call's header (see KEYS[12]).
local BY_REF, REF_LEN = 7, 11
local CALL = ">hI6I6i6I4"
local CALL_LEN = 24
-- An extended record's HEADER_REST followed by a body's prefix (reserve packs them as one).
local REST_PREFIX = ">ddI4hI6I6i6"
-- A fresh record's first 21 bytes: the state, then the body's prefix.
local FRESH = ">BhI6I6i6"
-- states (and 7 expired, 8 moving: see the operator features' section; 9 blocked: FLOWS)
local WAITING, DELAYED, ACTIVE, SUCCEEDED, FAILED, CANCELED = 1, 2, 3, 4, 5, 6
-- history events
local EV_PUBLISHED, EV_RESERVED, EV_SUCCEEDED, EV_RETRYING = 1, 2, 3, 4
local EV_FAILED, EV_STALLED, EV_CANCELED, EV_RELEASED, EV_RETRIED = 5, 6, 7, 8, 9

-- Removal from one maintenance pass or retention sweep, at most (bounded work per call).
local BUDGET = 1000
local RETENTION_BUDGET = 256

-- Defined further down (sections that refer to them come first).
local flushWaiting, flushFinished, flushStats, flushMeta, retention

--@
-- The operator features' keys (KEYS[14..16]), state and history events, for the scripts
-- that name them. Code every script takes (the maintenance, retention, finish) reads
-- KEYS[n] and literals instead: an EVAL script's closures each walk past every local
-- captured before them, so locals every script declared would cost every call.
local KR, KE, KZ
--{
KR, KE, KZ = KEYS[14], KEYS[15], KEYS[16]
--}
-- 8: moving (a move's first step marked it, see lua/move-out.lua): in no structure
local EXPIRED, MOVING = 7, 8
local EV_EXPIRED, EV_PROMOTED, EV_PRIORITIZED, EV_MOVED = 10, 11, 12, 13

--@
-- The meta hash (see KEYS[1]), read once per call. Its numbers are one binary field: read
-- and written with no number parsing or formatting (as seven text fields they cost ~17,000
-- instructions to parse and ~15,000 to write back, per call). A lane written before this
-- layout has no "n": it reads as empty (drain lanes before upgrading, as for records).
-- One written before metaNt (2026-11-25, 56 bytes) reads with metaNt 0: its tombstones are
-- not counted, as they were not then; one written before ops and wu (2026-11-26, 64
-- bytes) with both 0.
local META = ">dddddddddd"
local META_LEN = 80
local META_V2, META_V2_LEN = ">dddddddd", 64
local META_OLD, META_OLD_LEN = ">ddddddd", 56
-- metaNt (tombstones) is a local of its own, not a field of meta: a ninth field would
-- double the table made for every call. For the same reason ops and wu become fields
-- (meta.ops, meta.wu; meta.r, meta.x, meta.g, meta.w) only when they are not 0: a lane
-- that uses no operator feature keeps the table at its size.
local meta, metaDirty, metaNt
--{
meta = {}
do
  local m = redis.call("HMGET", KM, "n", "paused")
  local n = m[1]
  metaNt = 0
  if n and #n == META_LEN then
    local ops, wu
    meta.wl, meta.lp, meta.seq, meta.tok, meta.rs, meta.nd, meta.ne, metaNt, ops, wu =
      struct.unpack(META, n)
    if ops ~= 0 then
      meta.ops = ops
      if ops % 2 == 1 then meta.r = true end
      if ops % 4 >= 2 then meta.x = true end
      if ops % 8 >= 4 then meta.g = true end
      if ops % 32 >= 16 then meta.qj = true end
      if ops % 16 >= 8 then meta.f = true end
    end
    -- WATCHING: while a waiter watches this lane (tl.waitFor, Adapter.watch), every finish
    -- is published even with lifecycle events off (meta.w), until wu, which the watchers
    -- renew (lua/watch.lua); a watcher that died stops costing once it passed.
    if wu ~= 0 then
      meta.wu = wu
      if wu > NOW then meta.w = true end
    end
  elseif n and #n == META_V2_LEN then
    meta.wl, meta.lp, meta.seq, meta.tok, meta.rs, meta.nd, meta.ne, metaNt =
      struct.unpack(META_V2, n)
  elseif n and #n == META_OLD_LEN then
    meta.wl, meta.lp, meta.seq, meta.tok, meta.rs, meta.nd, meta.ne = struct.unpack(META_OLD, n)
  else
    -- absent (or lost) bounds are 0: the next maintenance queries and recomputes them
    meta.wl, meta.lp, meta.seq, meta.tok, meta.rs, meta.nd, meta.ne = 0, 0, 0, 0, 0, 0, 0
  end
  meta.paused = m[2] == "1"
end
metaDirty = false
-- FAIR GROUPS: a lane opened with groups (ARGV[4] "<maxConcurrency>g<limit>", then
-- "r<max>/<durationMs>" with each group's own rate limit) has meta.q, its groups'
-- concurrency (0: none), and meta.qr / meta.qrMs, that limit (GROUP WINDOWS); a lane
-- without keeps the table at its size.
if MAX_CONC == -1 then
  local c, q, rmax, rms = string.match(ARGV[4], "^(%d+)g(%d+)r?(%d*)/?(%d*)$")
  MAX_CONC = tonumber(c) or 0
  meta.q = tonumber(q) or 0
  if rmax ~= nil and rmax ~= "" then meta.qr, meta.qrMs = tonumber(rmax), tonumber(rms) end
end
--}

--@
-- By-ref records' call headers (see JOB RECORDS), read at most once per call (false: none),
-- and how many records of each call this call rewrote or deleted. Made when first needed:
-- most calls meet no by-ref record.
local calls, derefs, derefOrder
--{
calls, derefs, derefOrder = nil, nil, nil
--}

local function callHeader(ref)
  if calls == nil then calls = {} end
  local c = calls[ref]
  if c == nil then
    c = false
    local raw = redis.call("HGET", KB, ref)
    if raw and #raw == CALL_LEN then
      local prio, seq, putAt, pub, left = struct.unpack(CALL, raw)
      c = { prio = prio, seq = seq, putAt = putAt, pub = pub, left = left }
    end
    calls[ref] = c
  end
  return c
end

-- One record of call `ref` no longer refers to it: rewritten in another layout, or deleted.
-- Exactly once per record: a by-ref record's table carries `ref` until it is written.
local function deref(ref)
  if derefs == nil then derefs, derefOrder = {}, {} end
  local d = derefs[ref]
  if d == nil then
    d = 0
    derefOrder[#derefOrder + 1] = ref
  end
  derefs[ref] = d + 1
end

-- Count the calls' records down: a header none refers to any more is deleted.
local function flushDerefs()
  if derefOrder == nil then return end
  local sets, dels = {}, {}
  for i = 1, #derefOrder do
    local ref = derefOrder[i]
    local c = calls[ref]
    if c then
      c.left = c.left - derefs[ref]
      if c.left <= 0 then
        dels[#dels + 1] = ref
      else
        sets[#sets + 1] = ref
        sets[#sets + 1] = struct.pack(CALL, c.prio, c.seq, c.putAt, c.pub, c.left)
      end
    end
  end
  if #sets > 0 then redis.call("HSET", KB, unpack(sets)) end
  if #dels > 0 then redis.call("HDEL", KB, unpack(dels)) end
  derefs, derefOrder = nil, nil
end

--@
-- Epoch ms and put sequence numbers a record can hold: anything else (NaN, a foreign
-- writer's bytes read as doubles) marks the record as not ours.
local function plausible(seq, putAt)
  return seq > 0 and putAt > 0 and putAt < 1e14
end

-- Decode a stored record; nil when it is not a record tasklane wrote.
local function decode(raw)
  local k = string.byte(raw, 1)
  if k == nil then return nil end
  if k >= 1 and k <= 6 then
    if #raw <= PREFIX_LEN then return nil end
    local prio, seq, putAt, pub = struct.unpack(PREFIX, raw, 2)
    if not plausible(seq, putAt) then return nil end
    return {
      state = k, attempt = 0, stalls = 0, token = 0, exp = 0, res = 0, fin = 0,
      due = putAt, prio = prio, seq = seq, flags = 0, hcount = 0,
      body = string.sub(raw, 2), err = false, hist = "", pub = pub,
    }
  end
  if k == BY_REF then
    if #raw <= REF_LEN then return nil end
    local ref = string.sub(raw, 4, REF_LEN)
    local c = callHeader(ref)
    if not c then return nil end
    local seq = c.seq + struct.unpack(">I2", raw, 2)
    return {
      state = WAITING, attempt = 0, stalls = 0, token = 0, exp = 0, res = 0, fin = 0,
      due = c.putAt, prio = c.prio, seq = seq, flags = 0, hcount = 0,
      body = struct.pack(PREFIX, c.prio, seq, c.putAt, c.pub) .. string.sub(raw, REF_LEN + 1),
      err = false, hist = "", pub = c.pub, ref = ref,
    }
  end
  if k > 64 and k <= 73 and #raw >= HEADER_LEN then
    -- at least HEADER_LEN bytes: struct.unpack cannot fail
    local kind, attempt, stalls, flags, hcount, elen, fin, exp, res, token, due, blen =
      struct.unpack(HEADER, raw)
    if blen <= PREFIX_LEN or HEADER_LEN + blen + elen > #raw then return nil end
    local prio, seq = struct.unpack(PREFIX_ORDER, raw, HEADER_LEN + 1)
    -- body, err and hist stay in raw until expand() needs them: ack and extend only
    -- rewrite the header, and copy the rest of the record as one piece (see encode()).
    local rec = {
      state = kind - 64, attempt = attempt, stalls = stalls, token = token, exp = exp,
      res = res, fin = fin, due = due, prio = prio, seq = seq, flags = flags, hcount = hcount,
      raw = raw, blen = blen, elen = elen,
    }
    if flags >= 4 then
      rec.flags = flags % 4
      rec.pre = flags % 8 >= 4
      rec.skip = flags >= 8
    end
    return rec
  end
  return nil
end

--@
-- Split an extended record's body, error and history out of its raw bytes, once; needed
-- before reading or changing any of them.
local function expand(rec)
  local raw = rec.raw
  if raw == nil then return rec end
  local blen, elen = rec.blen, rec.elen
  rec.body = string.sub(raw, HEADER_LEN + 1, HEADER_LEN + blen)
  rec.err = false
  if elen > 0 then rec.err = string.sub(raw, HEADER_LEN + blen + 1, HEADER_LEN + blen + elen) end
  rec.hist = string.sub(raw, HEADER_LEN + blen + elen + 1)
  rec.raw = nil
  return rec
end

--@
-- putAt and publishedAt of a decoded record (from its body's prefix; a fresh record's
-- decode kept publishedAt already).
local function timesOf(rec)
  local _, _, putAt, publishedAt = struct.unpack(PREFIX, expand(rec).body)
  return putAt, publishedAt
end

local function publishedAtOf(rec)
  if rec.pub then return rec.pub end
  local _, publishedAt = timesOf(rec)
  return publishedAt
end

--@
-- The job's text (see body above), for Node to parse.
local function textOf(rec)
  return string.sub(expand(rec).body, PREFIX_LEN + 1)
end

--@
local function encode(rec)
  local flags = rec.flags
  if rec.pre then flags = flags + 4 end
  if rec.skip then flags = flags + 8 end
  if rec.raw then
    -- body, error and history untouched (see expand()): copy them as they are
    return struct.pack(HEADER, 64 + rec.state, math.min(rec.attempt, 65535),
      math.min(rec.stalls, 65535), flags, rec.hcount, rec.elen, rec.fin, rec.exp, rec.res,
      rec.token, rec.due, rec.blen) .. string.sub(rec.raw, HEADER_LEN + 1)
  end
  local err = rec.err or ""
  return struct.pack(HEADER, 64 + rec.state, math.min(rec.attempt, 65535),
    math.min(rec.stalls, 65535), flags, rec.hcount, #err, rec.fin, rec.exp, rec.res,
    rec.token, rec.due, #rec.body) .. rec.body .. err .. rec.hist
end

--@
-- Records read in this call, by id: a batch naming one job twice sees its own changes.
-- cache[id]: false (absent), { bad = raw } (not ours), or a decoded record (put's fast path
-- marks the ids it created with one shared placeholder: nothing after it reads them).
local cache, dirty, dirtyOrder, rawWrites, lifecycle, lifecycleKinds
--{
cache, dirty, dirtyOrder = {}, {}, {}
-- Records a fast path (put, reserve, ack) already holds as bytes: id, bytes pairs that
-- flushRecords() writes in the same HSET as the decoded records touched in this call.
-- A fast path takes only ids this call has not decoded, so the two sets never overlap.
rawWrites = {}

-- Lifecycle events of this call (when LIFECYCLE): kind -> ids, kinds in the order they
-- first happened. flushRecords() publishes them once the records are written, so a call
-- refused on its first write (OOM) announces nothing.
lifecycle, lifecycleKinds = {}, {}
--}

local function lifecycleEvent(kind, id)
  if not LIFECYCLE then
    -- Watched (see WATCHING): only the kinds a watcher waits for, a finish or a departure.
    if not meta.w then return end
    if kind ~= "succeeded" and kind ~= "failed" and kind ~= "canceled" and kind ~= "expired"
      and kind ~= "deleted" and kind ~= "moved" then
      return
    end
  end
  local ids = lifecycle[kind]
  if ids == nil then
    ids = {}
    lifecycle[kind] = ids
    lifecycleKinds[#lifecycleKinds + 1] = kind
  end
  ids[#ids + 1] = id
end

-- Cache what HMGET returned for one id (nil or false: no record).
local function remember(id, raw)
  if raw then cache[id] = decode(raw) or { bad = raw } else cache[id] = false end
end

local function load(ids)
  local missing, n = {}, 0
  for i = 1, #ids do
    if cache[ids[i]] == nil then
      n = n + 1
      missing[n] = ids[i]
    end
  end
  if n > 0 then
    local raws = redis.call("HMGET", KJ, unpack(missing))
    for i = 1, n do remember(missing[i], raws[i]) end
  end
end

local function get(id)
  local r = cache[id]
  if r == nil then
    load({ id })
    r = cache[id]
  end
  return r
end

local function touch(id, rec)
  cache[id] = rec
  if not dirty[id] then
    dirty[id] = true
    dirtyOrder[#dirtyOrder + 1] = id
  end
end

-- Write every touched record, and the fast paths' raw records, in one HSET; then publish
-- the call's lifecycle events (also when nothing was written: delete only removes).
local function flushRecords()
  local args, n = rawWrites, #rawWrites
  if n > 0 or #dirtyOrder > 0 then
    for i = 1, #dirtyOrder do
      local id = dirtyOrder[i]
      local rec = cache[id]
      -- a record deleted after it was touched in this call is not written back
      if type(rec) == "table" and not rec.bad then
        args[n + 1] = id
        args[n + 2] = encode(rec)
        n = n + 2
        if rec.ref then
          deref(rec.ref)
          rec.ref = nil
        end
      end
    end
    for i = 1, n, 7998 do
      redis.call("HSET", KJ, unpack(args, i, math.min(i + 7997, n)))
    end
    rawWrites = {}
    dirty = {}
    dirtyOrder = {}
  end
  flushDerefs()
  if #lifecycleKinds > 0 then
    for i = 1, #lifecycleKinds do
      local kind = lifecycleKinds[i]
      redis.call("PUBLISH", CHANNEL, cjson.encode({ t = kind, q = LANE, ids = lifecycle[kind] }))
    end
    lifecycle = {}
    lifecycleKinds = {}
  end
end

--@
-- Write back everything a maintenance pass or a transition collected.
local function flushAll()
  flushRecords()
  flushWaiting()
  flushMeta()
  flushStats()
  if flushFinished() or NOW - meta.rs >= 1000 then retention() end
end

--@
-- A priority-zset member: "<13-digit due><12-digit seq><id>" (see KEYS[4] above).
local function pmember(due, seq, id)
  return string.format("%013d%012d", due, seq) .. id
end

--@
-- Bounded per-job history (at most min(historyLimit, 255) entries).
--
-- The common life of a job (published, reserved once, succeeded) is stored as no entries
-- at all: while a record has no explicit entries (hcount 0) its history is implied by its
-- header: "published" at putAt, "reserved" at reservedAt once it has been reserved, and
-- "succeeded" at finishedAt when it succeeded. Any other event first writes the implied
-- entries out, then appends itself. Reserve and ack, the hot path, then write no history
-- bytes, and most succeeded records keep none.
-- historyLimit (ARGV[3]) capped at 255, parsed once per call, when first needed.
local historyCap
--{
historyCap = nil
--}
local function historyLimit()
  if historyCap == nil then historyCap = math.min(tonumber(ARGV[3]), 255) end
  return historyCap
end

-- The implied entries of a record with hcount 0, oldest first: { at, event } pairs.
local function impliedHistory(rec)
  local putAt = timesOf(rec)
  local out = { { putAt, EV_PUBLISHED } }
  if rec.res > 0 then out[#out + 1] = { rec.res, EV_RESERVED } end
  if rec.state == SUCCEEDED and rec.fin > 0 then out[#out + 1] = { rec.fin, EV_SUCCEEDED } end
  return out
end

local function note(rec, event, detail)
  local limit = historyLimit()
  if limit <= 0 then return end
  expand(rec)
  if rec.hcount == 0 then
    local implied = impliedHistory(rec)
    local parts = {}
    for i = 1, #implied do parts[i] = struct.pack(HIST_ENTRY, implied[i][1], implied[i][2], 0) end
    rec.hist = table.concat(parts)
    rec.hcount = #implied
  end
  detail = detail or ""
  if #detail > 1000 then detail = string.sub(detail, 1, 1000) end
  rec.hist = rec.hist .. struct.pack(HIST_ENTRY, NOW, event, #detail) .. detail
  rec.hcount = rec.hcount + 1
  while rec.hcount > limit do
    local len = struct.unpack(">H", rec.hist, 10)
    rec.hist = string.sub(rec.hist, 12 + len)
    rec.hcount = rec.hcount - 1
  end
end

--@
function flushMeta()
  if metaDirty then
    redis.call("HSET", KM, "n",
      struct.pack(META, meta.wl, meta.lp, meta.seq, meta.tok, meta.rs, meta.nd, meta.ne, metaNt,
        meta.ops or 0, meta.wu or 0))
    metaDirty = false
  end
end

--@
-- A delayed job or a lease was added with this time: keep the cached bounds below it.
local function lowerDelayedBound(at)
  if at < meta.nd then
    meta.nd = at
    metaDirty = true
  end
end

local function lowerLeaseBound(at)
  if at < meta.ne then
    meta.ne = at
    metaDirty = true
  end
end

--@
local function headScore(key)
  local head = redis.call("ZRANGE", key, 0, 0, "WITHSCORES")
  if head[2] then return tonumber(head[2]) end
  return 1e300
end

--@
-- Appending to the waiting structures, collected and written once per call.
local listAppend, prioAdd, madeWaiting
--{
listAppend, prioAdd, madeWaiting = {}, {}, 0
--}

function flushWaiting()
  if #listAppend > 0 then
    for i = 1, #listAppend, 7999 do
      redis.call("RPUSH", KW, unpack(listAppend, i, math.min(i + 7998, #listAppend)))
    end
    madeWaiting = madeWaiting + #listAppend
    listAppend = {}
  end
  if #prioAdd > 0 then
    for i = 1, #prioAdd, 7998 do
      redis.call("ZADD", KP, unpack(prioAdd, i, math.min(i + 7997, #prioAdd)))
    end
    madeWaiting = madeWaiting + #prioAdd / 2
    prioAdd = {}
  end
  local qa = meta.qa
  if qa then
    -- FAIR GROUPS (see there): the jobs made waiting on a grouped lane also go into their
    -- groups' zsets (qa: id, score, member per job); a group that had no entry joins the
    -- ring's end, groups in the order of their first job here. Inline: a closure here
    -- would cost every script's EVAL form on every call.
    -- groups put told (meta.qg), the others from gj
    local known = meta.qg or {}
    meta.qa, meta.qg = nil, nil
    -- KEYS[1], KEYS[10] by index: a local named here would cost every call its capture
    local tag = string.sub(KEYS[1], 1, -2)
    local ids, groups, unknown, at = {}, {}, {}, {}
    for i = 1, #qa, 3 do
      local id = qa[i]
      ids[#ids + 1] = id
      groups[#ids] = known[id]
      if groups[#ids] == nil then
        unknown[#unknown + 1] = id
        at[#unknown] = #ids
      end
    end
    for i = 1, #unknown, 7999 do
      local got = redis.call("HMGET", tag .. "gj", unpack(unknown, i, math.min(i + 7998, #unknown)))
      for k = 1, #got do groups[at[i + k - 1]] = got[k] or "" end
    end
    local adds, order = {}, {}
    for k = 1, #ids do
      local g = groups[k]
      local add = adds[g]
      if add == nil then
        add = {}
        adds[g] = add
        order[#order + 1] = g
      end
      add[#add + 1] = qa[3 * k - 1]
      add[#add + 1] = qa[3 * k]
    end
    for k = 1, #order do
      local g = order[k]
      local key, add = tag .. "gq:" .. g, adds[g]
      local had = redis.call("ZCARD", key)
      for i = 1, #add, 7998 do
        redis.call("ZADD", key, unpack(add, i, math.min(i + 7997, #add)))
      end
      if had == 0 then redis.call("RPUSH", tag .. "gr", g) end
    end
    -- A worker may wait while every group with jobs is at its limit (ready 0): wake one.
    if redis.call("LLEN", KEYS[10]) == 0 then redis.call("LPUSH", KEYS[10], "1") end
  end
end

--@
-- LATE ARRIVALS. Reserve takes priority-0 jobs from the list in list order, so the list
-- must stay in due order (due time, then put order). Appends nearly always are: put's
-- jobs are due now and have the newest seq, and every script that appends first promotes
-- the delayed jobs that fell due since the last call (sorted). A job whose (due, seq)
-- would not come after the list's last entry (a retry whose runAt has passed, a released
-- job or a reclaimed lease, which keep their due time, one of more than BUDGET delayed
-- jobs falling due at once) is a late arrival: it goes to KEYS[4] with score 0 (the
-- member's due and seq order them) and its record says so (flags 2). Reserve merges
-- them with the list by (due, seq) only while KEYS[4] holds any, so a lane with neither
-- late arrivals nor other priorities pays nothing for them. The list's last (due, seq) is
-- read at most once per call (LINDEX and its record), only when a job that is not put
-- arrives while the list holds a live job, and followed as the call appends.
--
-- A section of its own, apart from flushWaiting (which every script takes): only scripts
-- that make jobs waiting create this closure, which EVAL scripts do on every call. And no
-- new local at this level: an EVAL script's closures each walk the list of the locals
-- captured so far to find their upvalues, so every captured local costs every call of
-- every script. The list's last (due, seq), as this call knows it, is meta.td, meta.ts
-- (not in the meta hash; set only when needed), and flags are literals, as 1 is.

-- A job becoming waiting at its (due, seq), other than one put due now (put appends those
-- itself: due now, the newest seq, they come after anything in the list; put sets
-- meta.td, meta.ts to its last before it calls this). Priority 0: the list's end when it
-- comes after the list's last entry, else a late arrival; any other: the priority zset.
local function makeWaiting(id, rec)
  rec.state = WAITING
  if meta.q then
    -- FAIR GROUPS: its group's entry too (flushWaiting writes it)
    local qa = meta.qa or {}
    meta.qa = qa
    qa[#qa + 1] = id
    qa[#qa + 1] = -rec.prio
    qa[#qa + 1] = pmember(rec.due, rec.seq, id)
  end
  if rec.prio == 0 then
    if meta.td == nil then
      -- The last entry's record's (due, seq): a live job's, or a canceled one's (cancel
      -- keeps the due time); -1 when no live job is in the list; beyond any job when the
      -- record is gone (deleted: every later arrival is late, which is in order).
      meta.td, meta.ts = -1, -1
      if meta.wl > 0 then
        local last = redis.call("LINDEX", KW, -1)
        local tail = last and get(last)
        if type(tail) == "table" and not tail.bad then
          meta.td, meta.ts = tail.due, tail.seq
        else
          meta.td, meta.ts = 1e300, 1e300
        end
      end
    end
    local due, seq = rec.due, rec.seq
    if due > meta.td or (due == meta.td and seq > meta.ts) then
      rec.flags = 0
      listAppend[#listAppend + 1] = id
      meta.wl = meta.wl + 1
      metaDirty = true
      meta.td, meta.ts = due, seq
      return
    end
    rec.flags = 2 -- late
  end
  prioAdd[#prioAdd + 1] = -rec.prio
  prioAdd[#prioAdd + 1] = pmember(rec.due, rec.seq, id)
end

--@
-- Stats: samples gathered during the call, folded into the day's summaries once per call.
-- A day's wait and run summaries are one field each, "<day>:ws" and "<day>:rs": struct
-- ">ddd" (count, mean, M2) then HISTOGRAM_SIZE 6-byte bucket counts. The call's samples
-- are summarised (sum and buckets, then squared deviations from their mean) and merged
-- with Chan et al.'s parallel formula, core's mergeSummaries; only the touched buckets are
-- rewritten. One field per summary keeps a call to one HMGET and one HSET, with no number
-- formatting (a field per bucket and text numbers cost ~90k instructions per call).
-- Failures and retries are counters "<day>:f" and "<day>:r"; "sd" is the last day written.
-- Bucket index of HISTOGRAM_BOUNDS_MS (core's stats.ts) in closed form, no table: bounds
-- 1 2 5 10 20 50 100 200 500 ms (0..8), then seconds to 60 s (9..68), minutes to 60 min
-- (69..127), hours to 24 h (128..150), days to 7 d (151..156), then the open bucket (157).
local SMALL_BOUNDS = { 1, 2, 5, 10, 20, 50, 100, 200, 500 }
local LAST_BUCKET = 157
local SUMMARY = ">ddd"
local SUMMARY_LEN = 24
local BUCKET = ">I6"
local SUMMARY_BYTES = SUMMARY_LEN + 6 * (LAST_BUCKET + 1)

local function bucketIndex(ms)
  if ms < 500 then
    if ms < 0 then ms = 0 end
    for i = 1, 9 do
      if ms < SMALL_BOUNDS[i] then return i - 1 end
    end
  end
  if ms < 60000 then return 9 + math.floor(ms / 1000) end
  if ms < 3600000 then return 68 + math.floor(ms / 60000) end
  if ms < 86400000 then return 127 + math.floor(ms / 3600000) end
  if ms < 604800000 then return 150 + math.floor(ms / 86400000) end
  return LAST_BUCKET
end

local waitSamples, runSamples, statFailures, statRetries
--{
waitSamples, runSamples, statFailures, statRetries = {}, {}, 0, 0
--}

-- The stored summary `raw` (nil or not ours: empty) with `samples` merged in.
local function foldSummary(raw, samples)
  local n = #samples
  local sum = 0
  local counts, order = {}, {}
  for i = 1, n do
    local x = samples[i]
    sum = sum + x
    local b = bucketIndex(x)
    local c = counts[b]
    if c then
      counts[b] = c + 1
    else
      counts[b] = 1
      order[#order + 1] = b
    end
  end
  local mean = sum / n
  local m2 = 0
  for i = 1, n do
    local d = samples[i] - mean
    m2 = m2 + d * d
  end
  if not raw or #raw ~= SUMMARY_BYTES then raw = string.rep("\0", SUMMARY_BYTES) end
  local count0, mean0, m20 = struct.unpack(SUMMARY, raw)
  local count = count0 + n
  local delta = mean - mean0
  local parts = {
    struct.pack(SUMMARY, count, mean0 + delta * n / count, m20 + m2 + delta * delta * count0 * n / count),
  }
  table.sort(order)
  local pos = SUMMARY_LEN + 1
  for i = 1, #order do
    local b = order[i]
    local at = SUMMARY_LEN + 6 * b + 1
    parts[#parts + 1] = string.sub(raw, pos, at - 1)
    parts[#parts + 1] = struct.pack(BUCKET, struct.unpack(BUCKET, raw, at) + counts[b])
    pos = at + 6
  end
  parts[#parts + 1] = string.sub(raw, pos)
  return table.concat(parts)
end

function flushStats()
  if #waitSamples == 0 and #runSamples == 0 and statFailures == 0 and statRetries == 0 then
    return
  end
  local day = math.floor(NOW / 86400000)
  local prefix = day .. ":"
  local fields = { "sd" }
  if #waitSamples > 0 then fields[#fields + 1] = prefix .. "ws" end
  if #runSamples > 0 then fields[#fields + 1] = prefix .. "rs" end
  local current = redis.call("HMGET", KT, unpack(fields))
  local out = {}
  if #waitSamples > 0 then
    out[1] = fields[2]
    out[2] = foldSummary(current[2], waitSamples)
  end
  if #runSamples > 0 then
    out[#out + 1] = fields[#fields]
    out[#out + 1] = foldSummary(current[#fields], runSamples)
  end
  local lastDay = tonumber(current[1])
  if lastDay ~= day then
    out[#out + 1] = "sd"
    out[#out + 1] = day
  end
  if #out > 0 then redis.call("HSET", KT, unpack(out)) end
  if statFailures > 0 then redis.call("HINCRBY", KT, prefix .. "f", statFailures) end
  if statRetries > 0 then redis.call("HINCRBY", KT, prefix .. "r", statRetries) end
  -- A new day: forget the day 400 days back (and a few before it, after idle spells).
  if lastDay ~= day and lastDay ~= nil then
    for old = math.max(lastDay - 400, day - 430), day - 401 do
      redis.call("HDEL", KT, old .. ":ws", old .. ":rs", old .. ":f", old .. ":r")
    end
  end
end

--@
-- TAGS (capability tags). A job put with tags keeps them in KEYS[14] (its bundle's field
-- g, see REPORTS), and each tag has an entry in the tag index KEYS[17] while the job's
-- record exists: "<byte length>:<tag>\0<id>" (score 0), so the entries of one tag are one
-- lexical range whatever bytes a tag holds (the length keeps "a" apart from "ab", and from
-- a tag that contains "\0"). Scripts that remove records drop their entries (retention,
-- delete, a move's last step); only lanes whose jobs have tags (meta.g) read KEYS[14] to
-- do so.
--
-- FAILURE GROUPS (capability failureGroups). Every failed job has one entry in the failure
-- index KEYS[18] while it is failed: "<byte length>:<error name>\0<13-digit finishedAt>
-- <id>" (score 0), so a group is one lexical range in order of failure (its newest is the
-- range's last entry, its size a ZLEXCOUNT). Added when a job fails (flushFinished),
-- removed when it leaves the state (retry-failed, delete, move-out, retention).

-- (A tag's or an error name's range prefix in its index, "<byte length>:<name>\0", is
-- written out where it is needed: every script takes this section, and in the EVAL form
-- each function here is a closure made on every call.)

-- The error name of a failed record (its stored JobError's name; "Error" when it has none
-- readable).
local function errorNameOf(rec)
  local err = rec.err
  if err == nil and rec.raw and rec.elen > 0 then
    err = string.sub(rec.raw, HEADER_LEN + rec.blen + 1, HEADER_LEN + rec.blen + rec.elen)
  end
  if err then
    local ok, e = pcall(cjson.decode, err)
    if ok and type(e) == "table" and type(e.name) == "string" then return e.name end
  end
  return "Error"
end

local function failureMember(id, rec)
  local name = errorNameOf(rec)
  return #name .. ":" .. name .. "\0" .. string.format("%013d", rec.fin) .. id
end

-- The tag index entries of jobs `ids` (their bundles in KEYS[14] name the tags): removed.
-- Before the bundles themselves are.
local function dropTags(ids)
  if not meta.g or #ids == 0 then return end
  local stored = redis.call("HMGET", KEYS[14], unpack(ids))
  local members = {}
  for i = 1, #ids do
    local b = stored[i]
    if b and string.byte(b, 1) == 0 then
      local ok, v = pcall(cjson.decode, string.sub(b, 2))
      if ok and type(v) == "table" and type(v.g) == "table" then
        for k = 1, #v.g do
          local tag = tostring(v.g[k])
          members[#members + 1] = #tag .. ":" .. tag .. "\0" .. ids[i]
        end
      end
    end
  end
  for i = 1, #members, 7999 do
    redis.call("ZREM", KEYS[17], unpack(members, i, math.min(i + 7998, #members)))
  end
end

--@
-- An ops bit (see the meta hash), once: from now on the lane's scripts read and clean what
-- it stands for. `flag` is the meta field the bit is read into (r 1, x 2, g 4, f 8, qj 16).
-- The scripts on the hot path (put, and the finishing code ack takes) set their bits
-- inline instead: a section costs every EVAL call of a script that takes it.
local function markOps(flag, bit)
  if not meta[flag] then
    meta[flag] = true
    meta.ops = (meta.ops or 0) + bit
    metaDirty = true
  end
end

--@
-- A tag's or an error name's range prefix in its index (see TAGS).
local function indexPrefix(name)
  return #name .. ":" .. name .. "\0"
end

-- Index the tags of job `id` (a table of strings) into `into` (ZADD arguments). The lane
-- keeps tags from now on.
local function addTags(id, tags, into)
  for k = 1, #tags do
    into[#into + 1] = 0
    into[#into + 1] = indexPrefix(tags[k]) .. id
  end
  markOps("g", 4)
end

--@
-- Finishing a job: record fields, its zset, stats.
local finishedAdds, FINISHED_KEYS, finishedTouched
--{
finishedAdds = { [SUCCEEDED] = {}, [FAILED] = {}, [CANCELED] = {} }
FINISHED_KEYS = { [SUCCEEDED] = KS, [FAILED] = KF, [CANCELED] = KC }
-- FLOWS: on a lane with flows, the meta table, which collects the ends (fe) and says
-- whether any was queued (fq). Carried here, and KEYS and literals used below, so that
-- flushFinished captures no more locals (each costs an EVAL script's every call).
if meta.f then FINISHED_KEYS.flows = meta end
finishedTouched = {}
--}

-- NOW as a score argument, made once per call (string.format costs ~2,300 instructions).
local function nowText()
  if NOW_TEXT == nil then NOW_TEXT = string.format("%d", NOW) end
  return NOW_TEXT
end

local function finish(id, rec, state)
  rec.state = state
  rec.fin = NOW
  local adds = finishedAdds[state]
  if adds == nil then
    -- expired (7): its list made only when needed (most calls expire nothing)
    adds = {}
    finishedAdds[state] = adds
  end
  adds[#adds + 1] = nowText()
  adds[#adds + 1] = id
end

-- Returns whether this call has finished any job so far (also in an earlier flush: a
-- script that flushed its maintenance first still runs retention once at its end).
function flushFinished()
  for state, adds in pairs(finishedAdds) do
    if #adds > 0 then
      finishedTouched[state] = true
      for i = 1, #adds, 7998 do
        -- state 7, expired: KEYS[16]
        redis.call("ZADD", FINISHED_KEYS[state] or KEYS[16],
          unpack(adds, i, math.min(i + 7997, #adds)))
      end
      if state == FAILED then
        -- their entries in the failure index (FAILURE GROUPS)
        local members = {}
        for i = 2, #adds, 2 do
          local rec = cache[adds[i]]
          if type(rec) == "table" and not rec.bad then
            members[#members + 1] = 0
            members[#members + 1] = failureMember(adds[i], rec)
          end
        end
        for i = 1, #members, 7998 do
          redis.call("ZADD", KEYS[18], unpack(members, i, math.min(i + 7997, #members)))
        end
      end
      local flows = FINISHED_KEYS.flows
      if flows then
        -- FLOWS: this lane's jobs may have dependents: their ends go to the outbox below
        flows.fe = flows.fe or {}
        flows.fe[#flows.fe + 1] = { state, adds }
      end
      finishedAdds[state] = {}
    end
  end
  local flows = FINISHED_KEYS.flows
  if flows and flows.fe then
    -- FLOWS (see there): each end of a job that others wait for becomes one notification
    -- per dependent in this lane's outbox, in this script, so a crash cannot lose it. A
    -- function made only on lanes with flows (an EVAL script would make it every call).
    local ends = flows.fe
    flows.fe = nil;
    (function()
      local prefix = string.sub(KEYS[1], 1, -2)
      -- succeeded, failed, canceled, expired
      local names = { [4] = "succeeded", [5] = "failed", [6] = "canceled", [7] = "expired" }
      for e = 1, #ends do
        local state, adds = ends[e][1], ends[e][2]
        local ids = {}
        for i = 2, #adds, 2 do ids[#ids + 1] = adds[i] end
        local links = redis.call("HMGET", prefix .. "fl", unpack(ids))
        local notes = {}
        for i = 1, #ids do
          local ok, f = false, nil
          if links[i] then ok, f = pcall(cjson.decode, links[i]) end
          if ok and type(f) == "table" and type(f.p) == "table" and #f.p > 0 then
            local n = { s = names[state] }
            if state == 4 and flows.r then
              local stored = redis.call("HGET", KEYS[14], ids[i])
              if stored and string.byte(stored, 1) == 0 then
                local good, b = pcall(cjson.decode, string.sub(stored, 2))
                stored = good and type(b) == "table" and type(b.r) == "string" and b.r or nil
              end
              if stored then n.r = stored end
            end
            local text = cjson.encode(n)
            for k = 1, #f.p do
              local d = f.p[k]
              notes[#notes + 1] = d.l .. "\n" .. d.i .. "\n" .. d.x
              notes[#notes + 1] = text
            end
          end
        end
        -- HSETNX: a notification not yet delivered keeps the first end (an entry counts
        -- its dependency's first end only)
        for k = 1, #notes, 2 do redis.call("HSETNX", prefix .. "ob", notes[k], notes[k + 1]) end
        if #notes > 0 then flows.fq = true end
      end
    end)()
  end
  return next(finishedTouched) ~= nil
end

--@
-- maxStalls (ARGV[2]), parsed once per call, when first needed (a lease found expired).
local maxStallsValue
--{
maxStallsValue = nil
--}
local function maxStalls()
  if maxStallsValue == nil then maxStallsValue = tonumber(ARGV[2]) end
  return maxStallsValue
end

local function stalledError(id, stalls)
  return cjson.encode({
    name = "StalledError",
    message = "Job stalled " .. stalls .. " times (maxStalls " .. ARGV[2] .. ")",
    reason = "stalled",
  })
end

--@
-- Promote due delayed jobs and reclaim expired leases, in due order.
local function maintain()
  local moved = {}
  local due = {}
  if NOW >= meta.nd then
    if meta.x then
      -- EXPIRY (see below): waiting and delayed jobs whose time came expire, before delayed
      -- jobs are promoted. Inline, the tombstones' count too (see TOMBSTONES): an EVAL
      -- script would create a closure per helper on every call.
      -- KEYS[15]: the expiries; state 7 and history event 10: expired
      local due = redis.call("ZRANGEBYSCORE", KEYS[15], "-inf", NOW, "WITHSCORES", "LIMIT", 0,
        BUDGET)
      if #due > 0 then
        local ids = {}
        for i = 1, #due, 2 do ids[#ids + 1] = due[i] end
        redis.call("ZREM", KEYS[15], unpack(ids))
        load(ids)
        local pRem, dRem, tomb, held = {}, {}, {}, {}
        for i = 1, #ids do
          local id = ids[i]
          local rec = cache[id]
          if rec and not rec.bad and (rec.state == WAITING or rec.state == DELAYED
              or rec.state == 9) then
            if rec.state == 9 then
              -- blocked (FLOWS): out of the blocked zset; what it waits for runs on
              redis.call("ZREM", string.sub(KEYS[1], 1, -2) .. "bl", id)
            elseif rec.state == DELAYED then
              dRem[#dRem + 1] = id
            elseif rec.prio == 0 and rec.flags ~= 2 then
              -- its id stays in the list as a tombstone (TOMBSTONES)
              meta.wl = meta.wl - 1
              tomb[#tomb + 1] = id
            else
              pRem[#pRem + 1] = pmember(rec.due, rec.seq, id)
            end
            finish(id, rec, 7)
            note(rec, 10)
            lifecycleEvent("expired", id)
            touch(id, rec)
          elseif rec and not rec.bad and rec.state == ACTIVE then
            -- It runs on (it started in time); its entry moves past any time, for the
            -- check if it comes back unstarted.
            held[#held + 1] = 1e15 + tonumber(due[2 * i])
            held[#held + 1] = id
          end
        end
        if #held > 0 then redis.call("ZADD", KEYS[15], unpack(held)) end
        if #dRem > 0 then redis.call("ZREM", KD, unpack(dRem)) end
        if #pRem > 0 then redis.call("ZREM", KP, unpack(pRem)) end
        if #tomb > 0 then
          local counts = redis.call("HMGET", KX, unpack(tomb))
          local args = {}
          for i = 1, #tomb do
            args[2 * i - 1] = tomb[i]
            args[2 * i] = (tonumber(counts[i]) or 0) + 1
          end
          redis.call("HSET", KX, unpack(args))
          metaNt = metaNt + #tomb
        end
      end
    end
    due = redis.call("ZRANGEBYSCORE", KD, "-inf", NOW, "LIMIT", 0, BUDGET)
    if #due > 0 then redis.call("ZREM", KD, unpack(due)) end
    meta.nd = headScore(KD)
    if meta.x then meta.nd = math.min(meta.nd, headScore(KEYS[15])) end
    metaDirty = true
  end
  if #due > 0 then
    load(due)
    for i = 1, #due do
      local id = due[i]
      local rec = cache[id]
      if rec and not rec.bad and rec.state == DELAYED then
        moved[#moved + 1] = { id, rec, rec.due, rec.seq }
      elseif rec and rec.bad then
        -- Undecodable: put it where reserve will find it and hand it out as malformed.
        listAppend[#listAppend + 1] = id
        meta.wl = meta.wl + 1
        metaDirty = true
      end
    end
  end
  local expired = {}
  if NOW >= meta.ne then
    expired = redis.call("ZRANGEBYSCORE", KA, "-inf", NOW, "LIMIT", 0, BUDGET)
    if #expired > 0 then redis.call("ZREM", KA, unpack(expired)) end
    meta.ne = headScore(KA)
    metaDirty = true
  end
  if #expired > 0 then
    load(expired)
    -- their expiries (EXPIRY), where jobs have any
    local expiries = meta.x and redis.call("ZMSCORE", KEYS[15], unpack(expired)) or {}
    for i = 1, #expired do
      local id = expired[i]
      local rec = cache[id]
      if rec and not rec.bad and rec.state == ACTIVE and rec.pre then
        -- A prefetched delivery (reserve's startNow): not a stall and its attempt not
        -- spent, but marked (a suspect): the worker may have started it from its buffer
        -- just before it died, so the job's next stall counts this delivery too.
        rec.pre = false
        rec.skip = true
        rec.attempt = rec.attempt - 1
        note(rec, EV_STALLED, "prefetched")
        lifecycleEvent("stalled", id)
        moved[#moved + 1] = { id, rec, rec.due, rec.seq }
      elseif rec and not rec.bad and rec.state == ACTIVE then
        rec.stalls = rec.stalls + (rec.skip and 2 or 1)
        rec.skip = false
        note(rec, EV_STALLED)
        lifecycleEvent("stalled", id)
        if rec.stalls > maxStalls() then
          expand(rec).err = stalledError(id, rec.stalls)
          finish(id, rec, FAILED)
          statFailures = statFailures + 1
          note(rec, EV_FAILED, "stalled")
          lifecycleEvent("failed", id)
          touch(id, rec)
        else
          local e = expiries[i] and tonumber(expiries[i])
          if e and (e <= NOW or e >= 1e15) then
            redis.call("ZREM", KEYS[15], id)
            finish(id, rec, 7)
            note(rec, 10)
            lifecycleEvent("expired", id)
            touch(id, rec)
          else
            -- Its due time stays: it has waited already (its holder died or hung), so it
            -- goes back to the front of its priority, not behind the jobs put while it was
            -- held.
            moved[#moved + 1] = { id, rec, rec.due, rec.seq }
          end
        end
      end
    end
  end
  if #moved > 1 then
    table.sort(moved, function(x, y)
      if x[3] ~= y[3] then return x[3] < y[3] end
      return x[4] < y[4]
    end)
  end
  for i = 1, #moved do
    makeWaiting(moved[i][1], moved[i][2])
    touch(moved[i][1], moved[i][2])
  end
end

--@
-- maintain(), with the jobs it moved written to their lists and sets at once: for a script
-- that then finds jobs by id and moves them (cancel, delete, retry-failed), which must see
-- a job that fell due or ran out of lease where it now is.
local function maintainNow()
  maintain()
  flushWaiting()
  flushFinished()
end

--@
-- Retention of finished jobs by count and age, bounded per call.
function retention()
  -- The spec's numbers are parsed only for the states this call trims (tonumber costs
  -- ~2,400 instructions): an ack parses succeeded's, and none whose limit is "-1".
  local spec = {}
  for v in string.gmatch(RETENTION_SPEC, "[^,]+") do spec[#spec + 1] = v end
  -- States that just received jobs are trimmed by count now; ages are swept (every
  -- state) at most once a second per lane: saves commands on every ack.
  local sweep = NOW - meta.rs >= 1000
  if sweep then
    meta.rs = NOW
    metaDirty = true
    flushMeta()
  end
  -- succeeded, failed, canceled, expired (state 7, KEYS[16])
  -- (expired only in a lane whose jobs have expiries: none can have expired elsewhere)
  local keys = { KS, KF, KC, KEYS[16] }
  local states = { SUCCEEDED, FAILED, CANCELED, 7 }
  for i = 1, meta.x and 4 or 3 do
    local key = keys[i]
    if finishedTouched[states[i]] or sweep then
      -- The oldest first: those past the count limit (every call), then those past the
      -- age limit (the once-a-second sweep) among the rest, at most RETENTION_BUDGET.
      local ids = {}
      local maxCount = spec[2 * i]
      maxCount = maxCount and maxCount ~= "-1" and tonumber(maxCount)
      if maxCount and maxCount >= 0 then
        local n = redis.call("ZCARD", key)
        if n > maxCount then
          ids = redis.call("ZRANGE", key, 0, math.min(n - maxCount, RETENTION_BUDGET) - 1)
        end
      end
      -- the first `ranked` of ids are the zset's lowest ranks (removed by rank: cheaper)
      local ranked = #ids
      local maxAge = sweep and spec[2 * i - 1]
      maxAge = maxAge and maxAge ~= "-1" and tonumber(maxAge)
      if maxAge and maxAge >= 0 and #ids < RETENTION_BUDGET then
        local old = redis.call("ZRANGEBYSCORE", key, "-inf", NOW - maxAge, "LIMIT", #ids,
          RETENTION_BUDGET - #ids)
        for k = 1, #old do ids[#ids + 1] = old[k] end
      end
      if #ids > 0 then
        -- Out of the failure and tag indexes first (they are found from the records and
        -- bundles), and out of this call's cache: a listing later in the call must not
        -- find them. Inline: every script takes retention (see SECTIONS above).
        if key == KF then
          load(ids)
          local members = {}
          for k = 1, #ids do
            local rec = cache[ids[k]]
            if type(rec) == "table" and not rec.bad then
              members[#members + 1] = failureMember(ids[k], rec)
            end
          end
          if #members > 0 then redis.call("ZREM", KEYS[18], unpack(members)) end
        end
        dropTags(ids)
        for k = 1, #ids do cache[ids[k]] = false end
        redis.call("HDEL", KJ, unpack(ids))
        -- and what they stored beyond their records (results, extras), as delete does
        if meta.r then redis.call("HDEL", KEYS[14], unpack(ids)) end
        if meta.x then redis.call("ZREM", KEYS[15], unpack(ids)) end
        if meta.qj then redis.call("HDEL", string.sub(KEYS[1], 1, -2) .. "gj", unpack(ids)) end
        if meta.f then redis.call("HDEL", string.sub(KEYS[1], 1, -2) .. "fl", unpack(ids)) end
        if ranked > 0 then redis.call("ZREMRANGEBYRANK", key, 0, ranked - 1) end
        if #ids > ranked then redis.call("ZREM", key, unpack(ids, ranked + 1)) end
      end
    end
  end
end

--@
-- Wake one idle worker (it wakes the next if jobs remain): at most one marker is kept.
local function wake()
  if redis.call("LLEN", KK) == 0 then redis.call("LPUSH", KK, "1") end
end

--@
-- A delayed job due earlier than every other: wake a waiter so it shortens its block.
local function wakeIfEarliest(due)
  local head = redis.call("ZRANGE", KD, 0, 0, "WITHSCORES")
  if head[2] == nil or tonumber(head[2]) >= due then wake() end
end

--@
-- TOMBSTONES. A waiting job of priority 0 that is canceled or deleted leaves its id in the
-- list (cancel stays O(1), and list() cursors, absolute positions, never shift); reserve
-- skips it when popped. The id may be put again while that tombstone is still in the list
-- (after a delete, or once retention removed the canceled record): then the list holds it
-- twice, and only the last is the job's place (it was appended after every tombstone of
-- the id). KEYS[13] counts each id's tombstones, so reserve skips an id's first pops even
-- when its record is waiting again, and list() shows it at its last place only. metaNt is
-- their total: while it is 0 (the usual case) neither reads KEYS[13].

-- Priority-0 waiting jobs of `ids` (each once) became tombstones.
local function entomb(ids)
  if #ids == 0 then return end
  local counts = redis.call("HMGET", KX, unpack(ids))
  local args = {}
  for i = 1, #ids do
    args[2 * i - 1] = ids[i]
    args[2 * i] = (tonumber(counts[i]) or 0) + 1
  end
  redis.call("HSET", KX, unpack(args))
  metaNt = metaNt + #ids
  metaDirty = true
end

-- id -> its tombstones, for the ids of `ids` that have any; nil when none are counted.
local function tombstonesOf(ids)
  if metaNt <= 0 or #ids == 0 then return nil end
  local counts = redis.call("HMGET", KX, unpack(ids))
  local t = nil
  for i = 1, #ids do
    local c = tonumber(counts[i])
    if c and c > 0 then
      t = t or {}
      t[ids[i]] = c
    end
  end
  return t
end

-- Tombstones popped from the list (id -> how many), counted down to `left` (id -> what
-- remains: tombstonesOf's counts less the pops), written in one HSET and one HDEL.
local function unentomb(popped, left)
  local total, sets, dels = 0, {}, {}
  for id, k in pairs(popped) do
    total = total + k
    if left[id] > 0 then
      sets[#sets + 1] = id
      sets[#sets + 1] = left[id]
    else
      dels[#dels + 1] = id
    end
  end
  if #sets > 0 then redis.call("HSET", KX, unpack(sets)) end
  if #dels > 0 then redis.call("HDEL", KX, unpack(dels)) end
  if total > 0 then
    metaNt = math.max(0, metaNt - total)
    metaDirty = true
  end
end

-- The list is gone (nothing but tombstones was left in it): so are their counts.
local function clearTombstones()
  if metaNt > 0 then
    redis.call("DEL", KX)
    metaNt = 0
    metaDirty = true
  end
end

--@
-- EXPIRY. A job put with expiresAt is in KEYS[15] by that time. Its time come, the sweep
-- (in the maintenance, before delayed jobs are promoted) expires it if it is waiting or
-- delayed, drops the entry of a finished or gone job, and moves a running job's entry to
-- 1e15 + expiresAt (it started in time: it runs on). A job that comes back unstarted (a
-- retry, a release, a lease that ran out) expires if its entry says the time has come.
-- The earliest entry's time is folded into meta.nd, so a lane without due entries pays
-- nothing per call, and a lane whose jobs have no expiry (meta.x false) never reads
-- KEYS[15].

-- id -> expiresAt (epoch ms) of the ids that have one.
local function expiriesOf(ids)
  local out = {}
  if not meta.x or #ids == 0 then return out end
  local scores = redis.call("ZMSCORE", KE, unpack(ids))
  for i = 1, #ids do
    local e = scores[i] and tonumber(scores[i])
    if e then
      if e >= 1e15 then e = e - 1e15 end
      out[ids[i]] = e
    end
  end
  return out
end

-- A job not started by its expiry (the caller took it out of the waiting structures); the
-- maintenance does the same inline.
local function expireJob(id, rec)
  finish(id, rec, EXPIRED)
  note(rec, EV_EXPIRED)
  lifecycleEvent("expired", id)
  touch(id, rec)
  redis.call("ZREM", KE, id)
end

-- Records removed (delete): so is what they stored beyond them (retention does the same
-- inline).
local function dropJobRecords(ids)
  dropTags(ids)
  redis.call("HDEL", KJ, unpack(ids))
  if meta.r then redis.call("HDEL", KR, unpack(ids)) end
  if meta.x then redis.call("ZREM", KE, unpack(ids)) end
  if meta.qj then redis.call("HDEL", string.sub(KEYS[1], 1, -2) .. "gj", unpack(ids)) end
  if meta.f then redis.call("HDEL", string.sub(KEYS[1], 1, -2) .. "fl", unpack(ids)) end
end

--@
-- REPORTS (capability reports): a job's progress and log lines, in KEYS[14] with its
-- result (see there). `stored`: the job's value there (or false); `report`: the report as
-- JSON { p = progress text, l = { { at, attempt, message }, ... }, d = lines dropped by
-- the worker } (or "" / nil: none); `result`: a result to keep (or nil). Keeps the last
-- `limit` lines, counting the ones it drops. Returns the value to store, and whether the
-- report stored anything.
local function mergeReport(stored, report, limit, result)
  local b = {}
  if stored then
    if string.byte(stored, 1) == 0 then
      local ok, v = pcall(cjson.decode, string.sub(stored, 2))
      if ok and type(v) == "table" then b = v end
    else
      b.r = stored
    end
  end
  local changed = false
  if report and report ~= "" then
    local ok, rep = pcall(cjson.decode, report)
    if ok and type(rep) == "table" then
      if type(rep.p) == "string" then
        b.p = rep.p
        changed = true
      end
      local old = type(b.l) == "table" and b.l or {}
      local new = type(rep.l) == "table" and rep.l or {}
      local dropped = (tonumber(b.d) or 0) + (tonumber(rep.d) or 0)
      if #new > 0 then
        changed = true
        local all = {}
        for i = 1, #old do all[#all + 1] = old[i] end
        for i = 1, #new do all[#all + 1] = new[i] end
        local from = math.max(1, #all - limit + 1)
        dropped = dropped + from - 1
        local kept = {}
        for i = from, #all do kept[#kept + 1] = all[i] end
        b.l = kept
      end
      if dropped > 0 then b.d = dropped end
    end
  end
  if result then b.r = result end
  if b.p == nil and b.l == nil and b.d == nil and b.g == nil then return b.r or false, changed end
  return "\0" .. cjson.encode(b), changed
end

-- Store the reports (and results) of jobs `ids` (reports[i], results[i]: "" or nil for
-- none), all in one read and one write of KEYS[14]; publishes "progress" for the jobs
-- whose report stored something. Sets the lane's results bit (records removed later take
-- the value along).
local function storeReports(ids, reports, results, limit)
  if #ids == 0 then return end
  -- KEYS[14], by index: ack takes this section and no more of the operator features'
  local stored = redis.call("HMGET", KEYS[14], unpack(ids))
  -- an id named twice merges its second report into its first
  local current, order = {}, {}
  for i = 1, #ids do
    local id = ids[i]
    local report, result = reports[i], results and results[i]
    if result == "" then result = nil end
    if (report and report ~= "") or result then
      local before = current[id]
      if before == nil then before = stored[i] end
      local value, changed = mergeReport(before, report, limit, result)
      if value then
        if current[id] == nil then order[#order + 1] = id end
        current[id] = value
      end
      if changed then lifecycleEvent("progress", id) end
    end
  end
  local sets = {}
  for i = 1, #order do
    sets[#sets + 1] = order[i]
    sets[#sets + 1] = current[order[i]]
  end
  if #sets > 0 then
    redis.call("HSET", KEYS[14], unpack(sets))
    if not meta.r then
      meta.r = true
      meta.ops = (meta.ops or 0) + 1
      metaDirty = true
    end
  end
end

--@
local function waitingCount()
  local n = meta.wl
  n = n + redis.call("ZCARD", KP)
  return n
end

--@
local function publishEvent(kind, ids)
  if #ids > 0 and CHANNEL ~= "" then
    redis.call("PUBLISH", CHANNEL, cjson.encode({ t = kind, q = LANE, ids = ids }))
  end
end

--@
-- token: the lock's token as a number (nil for one that is not a number: lost).
local function lockStatus(rec, token)
  if not rec or rec.bad or rec.token ~= token then return 0 end
  if rec.state == ACTIVE then
    if rec.exp > NOW then return 1 end
    return 0
  end
  if rec.state == CANCELED and rec.flags == 1 then return 2 end
  return 0
end

--@
-- A job as get/list return it: JSON text (JS parses it), times as epoch ms.
local STATE_NAMES = {
  "waiting", "delayed", "active", "succeeded", "failed", "canceled", "expired", "waiting",
  "blocked",
}
local EVENT_NAMES = {
  "published", "reserved", "succeeded", "retrying", "failed", "stalled", "canceled",
  "released", "retried", "expired", "promoted", "prioritized", "moved", "unblocked",
}

-- When the job entered its current state (JobSummary.changedAt; what a search's since and
-- until compare): a waiting job's due time, a running one's reservation, a finished one's
-- finish; a delayed one's last history entry (its retry or release), or its put.
local function changedAtOf(rec)
  local state = rec.state
  if state == WAITING or (state == DELAYED and rec.due <= NOW) then return rec.due end
  if state == ACTIVE then return rec.res end
  -- blocked (FLOWS): since it was put
  if state == 9 then return (timesOf(rec)) end
  if state == DELAYED then
    if rec.hcount == 0 then return (timesOf(rec)) end
    expand(rec)
    local pos, at = 1, 0
    for _ = 1, rec.hcount do
      local a, _, len, nextPos = struct.unpack(HIST_ENTRY, rec.hist, pos)
      at = a
      pos = nextPos + len
    end
    return at
  end
  if rec.fin > 0 then return rec.fin end
  return rec.due
end

-- stored: the job's value in KEYS[14] (its result, or its reports and result), if any;
-- expiresAt: its expiry, if any.
local function infoJson(id, rec, stored, expiresAt)
  if rec.bad then
    return cjson.encode({ id = id, state = "waiting", text = rec.bad, priority = 0, attempt = 0,
      publishedAt = 0, runAt = 0, history = {}, malformed = true })
  end
  expand(rec)
  local state = STATE_NAMES[rec.state]
  if rec.state == DELAYED and rec.due <= NOW then state = "waiting" end
  local info = {
    id = id, state = state, text = textOf(rec), priority = rec.prio, attempt = rec.attempt,
    publishedAt = publishedAtOf(rec), runAt = rec.due,
  }
  if rec.fin > 0 then info.finishedAt = rec.fin end
  info.changedAt = changedAtOf(rec)
  if rec.err then info.error = rec.err end
  if stored then
    if string.byte(stored, 1) == 0 then
      local ok, b = pcall(cjson.decode, string.sub(stored, 2))
      if ok and type(b) == "table" then
        info.result, info.progress, info.logsDropped = b.r, b.p, b.d
        if type(b.l) == "table" and #b.l > 0 then info.logs = b.l end
        if type(b.g) == "table" and #b.g > 0 then info.tags = b.g end
        -- moving (an interrupted move): shown in its state before
        if rec.state == 8 and type(b.m) == "table" then info.state = STATE_NAMES[b.m.s] end
      end
    else
      info.result = stored
    end
  end
  if expiresAt then info.expiresAt = expiresAt end
  if meta.qj then
    -- FAIR GROUPS: its group, if it was put with one (KEYS[1] by index, see flushWaiting)
    local group = redis.call("HGET", string.sub(KEYS[1], 1, -2) .. "gj", id)
    if group then info.group = group end
  end
  -- FLOWS: the jobs it waits for and the jobs waiting for it, as stored (Node shapes them)
  if meta.f then
    local links = redis.call("HGET", string.sub(KEYS[1], 1, -2) .. "fl", id)
    if links then info.flow = links end
  end
  local history = {}
  if rec.hcount == 0 then
    local implied = impliedHistory(rec)
    for i = math.max(1, #implied - historyLimit() + 1), #implied do
      history[#history + 1] = { at = implied[i][1], event = EVENT_NAMES[implied[i][2]] }
    end
  else
    local pos = 1
    for _ = 1, rec.hcount do
      local at, ev, len, nextPos = struct.unpack(HIST_ENTRY, rec.hist, pos)
      local e = { at = at, event = EVENT_NAMES[ev] or "published" }
      if len > 0 then e.detail = string.sub(rec.hist, nextPos, nextPos + len - 1) end
      history[#history + 1] = e
      pos = nextPos + len
    end
  end
  info.history = history
  return cjson.encode(info)
end

--@
-- A call's locks (ack, extend, release): ARGV[from .. #ARGV - 1] their ids, ARGV[#ARGV]
-- their tokens packed, ">d" each in the ids' order. Binary because a token is read for
-- every job acked or extended: tonumber of a token's text cost ~2,400 instructions
-- (strtod), struct.unpack of its 8 bytes a fraction of that.
-- Returns the ids, whether one is named twice (the fast paths of ack and extend then step
-- aside: two in-place patches of one record would each start from the same stored
-- bytes), and the packed tokens (read with tokenAt); nil when the arguments are not ids
-- and one token per id.
local function lockIds(from)
  if #ARGV < from then return nil end
  local ids, named, twice = {}, {}, false
  local tokens = ARGV[#ARGV]
  for i = from, #ARGV - 1 do
    local id = ARGV[i]
    ids[#ids + 1] = id
    if named[id] then twice = true end
    named[id] = true
  end
  if #tokens ~= 8 * #ids then return nil end
  return ids, twice, tokens
end

-- The i-th lock's token of lockIds' packed tokens.
local function tokenAt(tokens, i)
  return (struct.unpack(">d", tokens, 8 * i - 7))
end
--@
-- Recurring schedules (capability schedules; scripts schedule and fire). KEYS[19] the
-- schedules hash: id -> "<revision>\n<nextAt or empty>\n<data>" (data is core's, opaque);
-- KEYS[20] the due index: a zset of the ids that have a next slot, score nextAt.
-- Writes schedule `id` if its revision is still `expect` ("" any; "0" none stored yet):
-- returns the new revision, or -1 (stale) and writes nothing.
local function scheduleWrite(id, expect, nextAt, data)
  local old = redis.call("HGET", KEYS[19], id)
  local revision = 0
  if old then revision = tonumber(string.match(old, "^(%d+)\n")) or 0 end
  if expect ~= "" and tonumber(expect) ~= revision then return -1 end
  revision = revision + 1
  redis.call("HSET", KEYS[19], id, revision .. "\n" .. nextAt .. "\n" .. data)
  if nextAt == "" then
    redis.call("ZREM", KEYS[20], id)
  else
    redis.call("ZADD", KEYS[20], nextAt, id)
  end
  return revision
end
--@
-- FAIR GROUPS (capability groups). A lane opened with groups (ARGV[4], meta.q: the
-- groups' concurrency, 0 none) serves its waiting jobs one group at a time, round-robin:
-- reserve takes its next job from the ring's first group, which then goes to the ring's
-- end. The jobs stay in KEYS[3] / KEYS[4] as on any lane (counts, list, search, cancel,
-- delete, expiry and the moves find them there unchanged); the groups are an index beside
-- them, under the lane's hash tag (keys built from KEYS[1]'s prefix, "<tag>" below):
--   <tag>gj          hash: id -> group, of the jobs put with a group (ops bit 16: scripts
--                    drop a removed record's field; get and list read it, a move carries
--                    it to the target lane)
--   <tag>gq:<group>  zset per group, its waiting jobs as in KEYS[4]: score -priority,
--                    member "<due><seq><id>" (so the lane's order within the group); the
--                    jobs without a group are the group ""
--   <tag>gr          ring: list of the groups that have entries, the one served next first;
--                    a group joins its end with its first entry, leaves when it has none
-- Every job made waiting (put, makeWaiting: a retry, a release, a lease run out, a delayed
-- job falling due, promote, retryFailed, a move in, setPriority) gets its entry in
-- flushWaiting. A job that leaves waiting otherwise (cancel, delete, expiry, a move out)
-- leaves a stale entry, which reserve drops when it meets it: an entry counts only while
-- its record is waiting with that priority, due time and seq. A taken job of priority 0
-- leaves a tombstone in KEYS[3] (see TOMBSTONES), which reserve trims off the list's head.
-- Active jobs per group are counted from KEYS[6] and gj by the reserve that needs them
-- (atomic, across every process), only when the groups have a concurrency.
--
-- GROUP WINDOWS (capability groupRateLimit): with meta.qr, at most meta.qr jobs of one
-- group handed out in any window of meta.qrMs ms. Each group that started a job has
--   <tag>gw:<group> zset of its starts: score the TIME of the reserve that handed the job
--                   out, member its fencing token (unique in the lane)
-- Reserve counts a group's starts inside (NOW - qrMs, NOW] when the ring reaches it,
-- passes over a group with none left, and logs its own starts (pruning the older ones);
-- the key's TTL is the window, so a group that starts nothing more leaves no key behind.
-- As for the lane's limit, every window that ends at a start holds at most qr starts.

-- Starts group window `key` allows at `now` (read-only: pruning is reserve's).
local function groupWindowRoom(key, now, max, ms)
  return max - redis.call("ZCOUNT", key, "(" .. (now - ms), "+inf")
end

-- Record jobs' groups (`grouped`: id, group, ...) in gj, where get, list, the moves and
-- every script that makes them waiting read them (put writes its own inline, see markOps).
local function storeGroups(grouped)
  if #grouped == 0 then return end
  local key = string.sub(KEYS[1], 1, -2) .. "gj"
  for i = 1, #grouped, 7998 do
    redis.call("HSET", key, unpack(grouped, i, math.min(i + 7997, #grouped)))
  end
  markOps("qj", 16)
end

-- Active jobs per group ("" for the jobs without one), from the leases, unless given as
-- `act`; with `limit`, also how many jobs the groups could hand out now: each group's
-- entries up to its free slots (stale entries counted until a reserve drops them), nil
-- when the ring is empty. It captures no local (KEYS[6] by index): every reserve's EVAL
-- form makes it, and a closure costs per local it captures (see SECTIONS).
local function groupTally(tag, limit, act, roomOf)
  if not act then
    act = {}
    local ids = redis.call("ZRANGE", KEYS[6], 0, -1)
    for i = 1, #ids, 7999 do
      local got = redis.call("HMGET", tag .. "gj", unpack(ids, i, math.min(i + 7998, #ids)))
      for k = 1, #got do
        local g = got[k] or ""
        act[g] = (act[g] or 0) + 1
      end
    end
  end
  if not limit then return act, nil end
  local ring = redis.call("LRANGE", tag .. "gr", 0, -1)
  if #ring == 0 then return act, nil end
  local n = 0
  for k = 1, #ring do
    local free = limit - (act[ring[k]] or 0)
    if roomOf and free > 0 then free = math.min(free, roomOf(ring[k])) end
    if free > 0 then n = n + math.min(free, redis.call("ZCARD", tag .. "gq:" .. ring[k])) end
  end
  return act, n
end

--@
-- FLOWS (capability flows; docs/adapter-contract.md, "Flows"). A job put with
-- dependencies is blocked (state 9): in no waiting structure, in the blocked zset
-- (<tag>bl, score its put time) until its wait is over. Its part in flows lives out of the
-- record, in the flow links hash (<tag>fl): id -> JSON { d = the jobs it waits for, in
-- order, each { l = lane, i = id, o = onFailure, t = task, s = how it ended, r = its
-- result }, n = entries not ended yet, p = the jobs waiting for it, each { l = lane, i =
-- id, x = its entry's index from 0 } }. Ops bit 8 marks a lane with links: only there
-- does a job's end (flushFinished) or deletion look them up, so a lane without flows pays
-- nothing. An end is queued in the lane's outbox (<tag>ob) by the script that ends the
-- job, one field per dependent's entry (HSETNX: the first end stays until delivered);
-- Node then delivers it to the dependent's lane (lua/deliver.lua, which applies each
-- entry once) and removes it, and any process's maintenance drains what a crash left.
-- Every key is the lane's hash tag's: one slot per lane, as for KEYS.
local BLOCKED, EV_UNBLOCKED = 9, 14

local function flowKey(suffix)
  return string.sub(KM, 1, -2) .. suffix
end

-- Ops bit 8, once: from now on this lane's ends and deletions look up flow links.
local function markFlows()
  if not meta.f then
    meta.f = true
    meta.ops = (meta.ops or 0) + 8
    metaDirty = true
  end
end

-- One notification per dependent of each id (the jobs deleted, or not found when linked),
-- with the end `state`.
local function queueEndsOf(ids, state)
  if not meta.f or #ids == 0 then return end
  local links = redis.call("HMGET", flowKey("fl"), unpack(ids))
  local text = cjson.encode({ s = state })
  for i = 1, #ids do
    local ok, f = false, nil
    if links[i] then ok, f = pcall(cjson.decode, links[i]) end
    if ok and type(f) == "table" and type(f.p) == "table" then
      for k = 1, #f.p do
        local d = f.p[k]
        redis.call("HSETNX", flowKey("ob"), d.l .. "\n" .. d.i .. "\n" .. d.x, text)
        meta.fq = true
      end
    end
  end
end

--@
-- FLOW LINKS as flow.lua and link.lua add to them: a job's stored links (its field of
-- <tag>fl, JSON, or nil) as a table whose `p` lists the jobs waiting for it.
local function decodeLinks(raw)
  local ok, decoded = false, nil
  if raw then ok, decoded = pcall(cjson.decode, raw) end
  local f = ok and type(decoded) == "table" and decoded or {}
  if type(f.p) ~= "table" then f.p = {} end
  return f
end

-- A job waiting for this one (its lane, id and entry index) added to `f`, once: a repeated
-- putFlow links nothing twice.
local function addDependent(f, lane, waiting, index)
  for j = 1, #f.p do
    local d = f.p[j]
    if d.l == lane and d.i == waiting and d.x == index then return end
  end
  f.p[#f.p + 1] = { l = lane, i = waiting, x = index }
end
