-- tasklane: flow — store one lane's jobs of a putFlow (capability flows; docs/adapter-
-- contract.md, "Flows"; FLOWS in _common.lua): each job that waits for others blocked,
-- with its entries, the rest as put stores them (waiting, or delayed until their runAt;
-- expiries and tags as put's), and the jobs of this lane that others of the flow wait
-- for told of those, in the same call (parents are stored first: flows.ts). A script of
-- its own rather than put's body wrapped: the function library then holds one copy of
-- put, the largest script, and a larger library costs the hot path's calls too (the Redis
-- README, flows).
-- KEYS: the eighteen lane keys (see _common.lua)
-- ARGV: common 1..6; ARGV[7] flags: "e" publish a "put" event for the created ids;
--       ARGV[8] 4 per link, JSON: the id of a job of this lane (of this call, or of an
--       interrupted call of the same flow), the lane, id and entry index of a job waiting
--       for it; ARGV[9] extras JSON as put's ([[index from 1, { e = expiresAt, g = tags,
--       q = fair group }], ...]); then 6 per job: id, text, priority, runAt ("" = now), publishedAt,
--       entries JSON ({ d = entries, n = how many }; "" for a job that waits for nothing)
-- Returns: { one integer per job, 1 created / 0 held already; "flows" when ends were
--          queued, else "" }

maintain()

local ids = {}
for i = 10, #ARGV, 6 do ids[#ids + 1] = ARGV[i] end
if (#ARGV - 9) % 6 ~= 0 then
  return redis.error_reply("TASKLANE_BAD_ARGUMENT flow takes whole jobs")
end
load(ids)

local result, created = {}, {}
local blAdd, flSet = {}, {}
local delayedAdd, earliest = {}, nil
for k = 1, #ids do
  local id = ids[k]
  if cache[id] then
    result[k] = 0
  else
    local at = 10 + 6 * (k - 1)
    local prio = tonumber(ARGV[at + 2]) or 0
    local runAt = tonumber(ARGV[at + 3])
    local publishedAt = tonumber(ARGV[at + 4]) or NOW
    local entries = ARGV[at + 5]
    meta.seq = meta.seq + 1
    metaDirty = true
    local rec = {
      state = WAITING, attempt = 0, stalls = 0, token = 0, exp = 0, res = 0, fin = 0,
      due = runAt or NOW, prio = prio, seq = meta.seq, flags = 0, hcount = 0,
      body = struct.pack(PREFIX, prio, meta.seq, NOW, publishedAt) .. ARGV[at + 1],
      err = false, hist = "",
    }
    if entries ~= "" then
      -- blocked: its runAt (or its put time) applies once its wait is over (deliver.lua)
      rec.state = BLOCKED
      blAdd[#blAdd + 1] = NOW
      blAdd[#blAdd + 1] = id
      flSet[#flSet + 1] = id
      flSet[#flSet + 1] = entries
    elseif runAt and runAt > NOW then
      rec.state = DELAYED
      delayedAdd[#delayedAdd + 1] = runAt
      delayedAdd[#delayedAdd + 1] = id
      if earliest == nil or runAt < earliest then earliest = runAt end
    else
      makeWaiting(id, rec)
    end
    cache[id] = rec
    touch(id, rec)
    lifecycleEvent("published", id)
    created[#created + 1] = id
    result[k] = 1
  end
end
if #blAdd > 0 then
  markFlows()
  redis.call("ZADD", flowKey("bl"), unpack(blAdd))
  redis.call("HSET", flowKey("fl"), unpack(flSet))
end
if earliest ~= nil then
  lowerDelayedBound(earliest)
  wakeIfEarliest(earliest)
  redis.call("ZADD", KD, unpack(delayedAdd))
end
if #listAppend + #prioAdd > 0 then wake() end

-- Expiries and tags of the jobs created (EXPIRY and TAGS, as put.lua stores them).
do
  local ok, list = pcall(cjson.decode, ARGV[9])
  if not ok or type(list) ~= "table" then list = {} end
  local index, tagged, bundles, grouped = {}, {}, {}, {}
  for k = 1, #list do
    local entry = list[k]
    local i = type(entry) == "table" and tonumber(entry[1])
    local x = i and result[i] == 1 and entry[2]
    if meta.q and type(x) == "table" and type(x.q) == "string" and x.q ~= "" then
      grouped[#grouped + 1] = ids[i]
      grouped[#grouped + 1] = x.q
    end
    local e = type(x) == "table" and tonumber(x.e)
    if e then
      index[#index + 1] = e
      index[#index + 1] = ids[i]
      lowerDelayedBound(e)
    end
    if type(x) == "table" and type(x.g) == "table" and #x.g > 0 then
      addTags(ids[i], x.g, tagged)
      bundles[#bundles + 1] = ids[i]
      bundles[#bundles + 1] = "\0" .. cjson.encode({ g = x.g })
    end
  end
  if #bundles > 0 then
    redis.call("HSET", KR, unpack(bundles))
    for i = 1, #tagged, 7998 do
      redis.call("ZADD", KEYS[17], unpack(tagged, i, math.min(i + 7997, #tagged)))
    end
    markOps("r", 1)
  end
  if meta.q then
    -- FAIR GROUPS: the created jobs' groups, as put stores them (gj, ops bit 16, and
    -- flushWaiting told the groups of the jobs made waiting now); a blocked job's is read
    -- from gj when it is unblocked
    local known = {}
    for k = 1, #created do known[created[k]] = "" end
    for k = 1, #grouped, 2 do known[grouped[k]] = grouped[k + 1] end
    meta.qg = known
    storeGroups(grouped)
  end
  if #index > 0 then
    redis.call("ZADD", KE, unpack(index))
    markOps("x", 2)
  end
end

-- The jobs of this lane the flow's jobs wait for learn of them (a repeat: once).
local links = cjson.decode(ARGV[8])
if #links > 0 then
  markFlows()
  local byId, order = {}, {}
  for k = 1, #links, 4 do
    local id = links[k]
    local f = byId[id]
    if f == nil then
      f = decodeLinks(redis.call("HGET", flowKey("fl"), id))
      byId[id] = f
      order[#order + 1] = id
    end
    addDependent(f, links[k + 1], links[k + 2], links[k + 3])
  end
  local set = {}
  for k = 1, #order do
    -- only jobs stored here (a job not created was another's: the call answers duplicate)
    if get(order[k]) then
      set[#set + 1] = order[k]
      set[#set + 1] = cjson.encode(byId[order[k]])
    end
  end
  if #set > 0 then redis.call("HSET", flowKey("fl"), unpack(set)) end
end
flushAll()
if string.find(ARGV[7], "e", 1, true) then publishEvent("put", created) end
return { result, meta.fq and "flows" or "" }
