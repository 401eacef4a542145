-- tasklane: search — one page of a search (capability search: listPage, count), from a
-- cursor, examining a bounded number of entries per call (constant memory on both sides;
-- never KEYS). Where it walks:
--   a tag given: the tag's range of the tag index (KEYS[17], TAGS in _common.lua), in
--     lexical order of the ids; every other condition is checked on the record;
--   state "failed" with an error name: the group's range of the failure index (KEYS[18],
--     FAILURE GROUPS), in order of failure;
--   otherwise each state's structure in turn (the filter's state, or every state in the
--     order of JOB_STATES): zsets by (score, member), the waiting jobs' priority zset
--     first, then their list by absolute position (see walkList). A state alone is how
--     the adapter's list() pages.
-- An entry examined is never examined again by the same listing: a cursor names the last
-- one, so a job that stays where it is is listed once, one that leaves before the
-- listing reaches it is not, and one added behind the cursor may be.
-- KEYS: the eighteen lane keys (see _common.lua)
-- ARGV: common 1..6; ARGV[7] "l" list / "c" count; ARGV[8] state (1..7, 9 blocked, "" every);
--       ARGV[9] task ("" any); ARGV[10] tag ("" any); ARGV[11] error name ("" any);
--       ARGV[12] since, ARGV[13] until (epoch ms, "" none); ARGV[14] page size (most jobs
--       listed per call; count: most entries examined); ARGV[15] cursor ("" = start);
--       ARGV[16] "s": summaries (no payload, history, result, progress or logs)
-- Returns: { next cursor ("" = done), then the jobs' JSON (list: as get's, or summaries
--          with the task instead of the text) or how many matched (count) }

maintain()
flushAll()

local counting = ARGV[7] == "c"
local wantState = tonumber(ARGV[8])
local task = ARGV[9]
local tag, errName = ARGV[10], ARGV[11]
local since, before = tonumber(ARGV[12]), tonumber(ARGV[13])
local size = tonumber(ARGV[14])
local cursor = ARGV[15]
local summaries = ARGV[16] == "s"
-- Entries examined at most per call (a page may come back short, with a cursor).
local budget = math.max(size, 1000)
if counting then budget = size end
local out = { "" }
local matched = 0
local full = false

-- The task of a job text (see job-text.ts: "[~<n>:<trace context>]<task length>:<app
-- length or ->:<task>..."): its first <task length> UTF-16 units after the head, as
-- bytes (a character of four UTF-8 bytes is two UTF-16 units). nil when the text is not
-- ours.
local function taskOf(text)
  local from = 1
  if string.byte(text, 1) == 126 then
    local colon = string.find(text, ":", 2, true)
    if not colon then return nil end
    from = colon + 1 + (tonumber(string.sub(text, 2, colon - 1)) or 0)
  end
  local a = string.find(text, ":", from, true)
  local b = a and string.find(text, ":", a + 1, true)
  local units = b and tonumber(string.sub(text, from, a - 1))
  if not units then return nil end
  local i, n = b + 1, 0
  while n < units and i <= #text do
    local c = string.byte(text, i)
    if c < 128 then i, n = i + 1, n + 1
    elseif c < 224 then i, n = i + 2, n + 1
    elseif c < 240 then i, n = i + 3, n + 1
    else i, n = i + 4, n + 2 end
  end
  return string.sub(text, b + 1, i - 1)
end

-- A job's summary (JobSummary, less what Node adds): no text, history or bundle.
local function summaryJson(id, rec, stored, expiresAt)
  if rec.bad then return cjson.encode({ id = id, state = "waiting", task = "", malformed = true,
    priority = 0, attempt = 0, publishedAt = 0, runAt = 0 }) end
  local state = STATE_NAMES[rec.state]
  if rec.state == DELAYED and rec.due <= NOW then state = "waiting" end
  local s = {
    id = id, state = state, task = taskOf(textOf(rec)) or "", priority = rec.prio,
    attempt = rec.attempt, publishedAt = publishedAtOf(rec), runAt = rec.due,
    changedAt = changedAtOf(rec),
  }
  if rec.fin > 0 then s.finishedAt = rec.fin end
  if rec.err then s.error = rec.err end
  if stored and string.byte(stored, 1) == 0 then
    local ok, b = pcall(cjson.decode, string.sub(stored, 2))
    if ok and type(b) == "table" and type(b.g) == "table" and #b.g > 0 then s.tags = b.g end
  end
  if expiresAt then s.expiresAt = expiresAt end
  return cjson.encode(s)
end

local function matches(rec)
  if task ~= "" and taskOf(textOf(rec)) ~= task then return false end
  if errName ~= "" then
    if not (rec.err or (rec.raw and rec.elen > 0)) or errorNameOf(rec) ~= errName then
      return false
    end
  end
  if since or before then
    local at = changedAtOf(rec)
    if since and at < since then return false end
    if before and at >= before then return false end
  end
  return true
end

-- The jobs `ids`, in order, that are in `want` (a state; nil: any but moving) and match.
-- `inList`: the ids come from the waiting list (a late arrival there is not its place).
-- Returns false once the page is full (the caller stops at that id: `stopAt`).
local stopAt
local function take(ids, want, inList)
  if #ids == 0 then return true end
  load(ids)
  local stored, expiries = nil, nil
  for i = 1, #ids do
    local id = ids[i]
    local rec = cache[id]
    -- a record tasklane did not write is listed where it is found, when nothing but a
    -- state is asked (get shows it as malformed)
    local ok = rec and (rec.bad and task == "" and tag == "" and errName == "" and not since
      and not before)
    if rec and not rec.bad then
      local state = rec.state
      ok = state ~= MOVING and (want == nil or state == want)
        and (not inList or (rec.prio == 0 and rec.flags ~= 2))
        and matches(rec)
    end
    if ok then
      if not counting and matched >= size then
        stopAt = i
        return false
      end
      matched = matched + 1
      if not counting then
        if stored == nil then
          stored = meta.r and redis.call("HMGET", KR, unpack(ids)) or {}
          expiries = expiriesOf(ids)
        end
        if summaries then
          out[#out + 1] = summaryJson(id, rec, stored[i], expiries[id])
        else
          out[#out + 1] = infoJson(id, rec, stored[i], expiries[id])
        end
      end
    end
  end
  return true
end

-- A lexical index range from `after` (a member; "" = the range's start): the ids behind
-- `prefix`, until the page is full or the budget is spent. Returns the next cursor
-- (a member), or nil when the range is done.
local function walkIndex(key, prefix, after, want)
  local min = after == "" and ("[" .. prefix) or ("(" .. after)
  local max = "(" .. string.sub(prefix, 1, -2) .. "\1"
  local members = redis.call("ZRANGE", key, min, max, "BYLEX", "LIMIT", 0, budget)
  local ids = {}
  for i = 1, #members do
    local m = string.sub(members[i], #prefix + 1)
    -- the failure index: 13 digits of finishedAt before the id
    if key == KEYS[18] then m = string.sub(m, 14) end
    ids[i] = m
  end
  if not take(ids, want, false) then
    if stopAt == 1 then return after end
    return members[stopAt - 1]
  end
  if #members < budget then return nil end
  return members[#members]
end

-- A zset by (score, member) after cursor "score|member" ("" = its start): members, the
-- cursor of the last one (nil when the zset is done).
local function zpage(key, cur)
  local start = 0
  if cur ~= "" then
    local bar = string.find(cur, "|", 1, true)
    local score, member = tonumber(string.sub(cur, 1, bar - 1)), string.sub(cur, bar + 1)
    local s = redis.call("ZSCORE", key, member)
    if s and tonumber(s) == score then
      start = redis.call("ZRANK", key, member) + 1
    else
      -- gone: after every member of a lower score, and those of its score before it
      start = redis.call("ZCOUNT", key, "-inf", "(" .. string.format("%.17g", score))
      local same = redis.call("ZRANGEBYSCORE", key, score, score)
      for i = 1, #same do
        if same[i] < member then start = start + 1 end
      end
    end
  end
  local batch = redis.call("ZRANGE", key, start, start + budget - 1, "WITHSCORES")
  local members, scores = {}, {}
  for i = 1, #batch, 2 do
    members[#members + 1] = batch[i]
    scores[#scores + 1] = batch[i + 1]
  end
  return members, scores
end

-- One zset's page: the ids of its members (`toId` maps a member to its id), from `cur`.
-- Returns the next cursor within the zset, or nil when it is done.
local function walkZset(key, cur, want, toId)
  local members, scores = zpage(key, cur)
  local ids = {}
  for i = 1, #members do ids[i] = toId and toId(members[i]) or members[i] end
  local last = #members
  if not take(ids, want, false) then last = stopAt - 1 end
  if last < #members or #members == budget then
    if last == 0 then return cur end
    return scores[last] .. "|" .. members[last]
  end
  return nil
end

-- The waiting list from absolute position `abs`: meta lp counts every id ever popped from
-- it, so positions survive pops; cancel and delete leave tombstones rather than shifting
-- it, and an id in it more than once is listed at its last place (TOMBSTONES in
-- _common.lua). Returns the next position, or nil when the list is done.
local function walkList(abs)
  local start = math.max(0, abs - meta.lp)
  local ids = redis.call("LRANGE", KW, start, start + budget - 1)
  local got = #ids
  local tombs = tombstonesOf(ids)
  local shown, at = {}, {}
  for i = 1, got do
    local id = ids[i]
    if not tombs or not tombs[id] or redis.call("LPOS", KW, id, "RANK", -1) == start + i - 1 then
      shown[#shown + 1] = id
      at[#shown] = i
    end
  end
  if not take(shown, WAITING, true) then return meta.lp + start + at[stopAt] - 1 end
  if got < budget then return nil end
  return meta.lp + start + got
end

local ZSETS = {
  [DELAYED] = KD, [ACTIVE] = KA, [SUCCEEDED] = KS, [FAILED] = KF, [CANCELED] = KC, [EXPIRED] = KZ,
  [BLOCKED] = flowKey("bl"),
}
local function pid(member) return string.sub(member, 26) end

if tag ~= "" then
  local after = cursor == "" and "" or string.sub(cursor, 3)
  local nextCur = walkIndex(KEYS[17], indexPrefix(tag), after, wantState)
  if nextCur then out[1] = "g|" .. nextCur end
elseif errName ~= "" and wantState == FAILED then
  local after = cursor == "" and "" or string.sub(cursor, 3)
  local nextCur = walkIndex(KEYS[18], indexPrefix(errName), after, FAILED)
  if nextCur then out[1] = "h|" .. nextCur end
else
  -- "s|<state>|<where>": where is "p|<zset cursor>" or "w|<position>" in waiting, a zset
  -- cursor elsewhere
  local state, where = wantState or WAITING, ""
  if cursor ~= "" then
    local bar = string.find(cursor, "|", 3, true)
    state = tonumber(string.sub(cursor, 3, bar - 1))
    where = string.sub(cursor, bar + 1)
  end
  -- the states in order, then blocked (9, FLOWS; 8, moving, is never listed)
  while state and (state <= EXPIRED or state == BLOCKED) do
    local nextWhere = nil
    if state == WAITING then
      if where == "" then where = "p|" end
      if string.sub(where, 1, 1) == "p" then
        local c = walkZset(KP, string.sub(where, 3), WAITING, pid)
        if c then nextWhere = "p|" .. c else nextWhere = "w|" .. meta.lp end
        -- the list after the zset, in the same call while the page has room
        if not c and (counting or matched < size) then
          local p = walkList(meta.lp)
          nextWhere = p and ("w|" .. p) or nil
        end
      else
        local p = walkList(tonumber(string.sub(where, 3)))
        nextWhere = p and ("w|" .. p) or nil
      end
    else
      local c = walkZset(ZSETS[state], where, state, nil)
      nextWhere = c
    end
    if nextWhere then
      out[1] = "s|" .. state .. "|" .. nextWhere
      break
    end
    if wantState then break end
    state = state + 1
    if state == MOVING then state = BLOCKED end
    where = ""
    if not counting and matched >= size then
      if state <= BLOCKED then out[1] = "s|" .. state .. "|" end
      break
    end
  end
end
if counting then out[2] = matched end
return out
