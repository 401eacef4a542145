-- tasklane: list — one page of the jobs in one state, from a cursor (constant memory on
-- both sides; never KEYS). Zset-backed states page by (score, member); the waiting list
-- pages by absolute position (meta lp counts every id ever popped, so positions survive
-- pops; cancel and delete leave tombstones rather than shifting the list; an id that is
-- in it more than once is listed at its last place, see TOMBSTONES in _common.lua).
-- KEYS: the eighteen lane keys (see _common.lua)
-- ARGV: common 1..6; ARGV[7] state (1..7); ARGV[8] cursor ("" = start); ARGV[9] page size
-- Returns: { next cursor ("" = done), job JSON... }

maintain()
flushAll()

local state = tonumber(ARGV[7])
local cursor = ARGV[8]
local size = tonumber(ARGV[9])
local out = { "" }

local function emit(ids, want, prio0)
  if #ids == 0 then return end
  load(ids)
  local results = {}
  if meta.r then results = redis.call("HMGET", KR, unpack(ids)) end
  local expiries = expiriesOf(ids)
  for i = 1, #ids do
    local rec = cache[ids[i]]
    -- from the list (prio0): priority-0 jobs that are there (not late arrivals, flags 2);
    -- from a zset: every job in the state
    if rec and (rec.bad or (rec.state == want
        and (not prio0 or (rec.prio == 0 and rec.flags ~= 2)))) then
      out[#out + 1] = infoJson(ids[i], rec, results[i], expiries[ids[i]])
    end
  end
end

-- One page of a zset after (score, member); returns members, next cursor or nil.
local function zpage(key, cur)
  local minScore, after = "-inf", nil
  if cur ~= "" then
    local bar = string.find(cur, "|", 1, true)
    minScore = string.sub(cur, 1, bar - 1)
    after = string.sub(cur, bar + 1)
  end
  local members, lastScore, lastMember = {}, nil, nil
  local offset = 0
  for _ = 1, 50 do
    local batch = redis.call("ZRANGEBYSCORE", key, minScore, "+inf", "WITHSCORES", "LIMIT", offset, size)
    for i = 1, #batch, 2 do
      local m, s = batch[i], batch[i + 1]
      if after == nil or tonumber(s) > tonumber(minScore) or m > after then
        if #members < size then
          members[#members + 1] = m
          lastScore, lastMember = s, m
        end
      end
    end
    offset = offset + #batch / 2
    if #members >= size or #batch / 2 < size then
      if #members < size then return members, nil end
      return members, lastScore .. "|" .. lastMember
    end
  end
  if lastScore == nil then return members, nil end
  return members, lastScore .. "|" .. lastMember
end

local ZSETS = {
  [DELAYED] = KD, [ACTIVE] = KA, [SUCCEEDED] = KS, [FAILED] = KF, [CANCELED] = KC, [EXPIRED] = KZ,
}

if state == WAITING then
  if cursor == "" then cursor = "p" end
  if string.sub(cursor, 1, 1) == "p" then
    local members, nextCur = zpage(KP, string.sub(cursor, 3))
    local ids = {}
    for i = 1, #members do ids[i] = string.sub(members[i], 26) end
    emit(ids, WAITING, false)
    if nextCur then out[1] = "p|" .. nextCur else out[1] = "w|" .. meta.lp end
  else
    local abs = tonumber(string.sub(cursor, 3))
    local start = abs - meta.lp
    if start < 0 then start = 0 end
    local ids = redis.call("LRANGE", KW, start, start + size - 1)
    local got = #ids
    local tombs = tombstonesOf(ids)
    if tombs then
      local shown = {}
      for i = 1, got do
        local id = ids[i]
        if not tombs[id] or redis.call("LPOS", KW, id, "RANK", -1) == start + i - 1 then
          shown[#shown + 1] = id
        end
      end
      ids = shown
    end
    emit(ids, WAITING, true)
    if got == size then out[1] = "w|" .. (meta.lp + start + got) end
  end
elseif ZSETS[state] then
  local members, nextCur = zpage(ZSETS[state], cursor)
  emit(members, state, nil)
  out[1] = nextCur or ""
end
return out
