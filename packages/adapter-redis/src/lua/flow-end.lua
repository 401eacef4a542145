-- (flow.lua's end, after put's body: see flow.lua)
-- put refused its arguments: nothing was written
if type(putReply) == "table" and putReply.err then return putReply end
local spec = cjson.decode(flowSpec)
local created = {}
for k = 1, #spec.b do
  local i, id, runAt, links = spec.b[k][1], spec.b[k][2], spec.b[k][3], spec.b[k][4]
  if type(putReply) ~= "table" or putReply[i] == 1 then
    created[#created + 1] = { id, runAt, links }
  end
end
if #created > 0 then
  markFlows()
  local dRem, blAdd, flSet = {}, {}, {}
  for k = 1, #created do
    local id = created[k][1]
    local rec = get(id)
    if rec and not rec.bad and rec.state == DELAYED and rec.due == NEVER then
      dRem[#dRem + 1] = id
      rec.state = BLOCKED
      rec.due = tonumber(created[k][2]) or 0
      touch(id, rec)
      blAdd[#blAdd + 1] = NOW
      blAdd[#blAdd + 1] = id
      flSet[#flSet + 1] = id
      flSet[#flSet + 1] = created[k][3]
    end
  end
  if #dRem > 0 then
    redis.call("ZREM", KD, unpack(dRem))
    redis.call("ZADD", flowKey("bl"), unpack(blAdd))
    redis.call("HSET", flowKey("fl"), unpack(flSet))
  end
end
-- The jobs of this lane the flow's jobs wait for learn of them (a repeat: once).
if #spec.p > 0 then
  markFlows()
  local byId, order = {}, {}
  for k = 1, #spec.p, 4 do
    local id = spec.p[k]
    local f = byId[id]
    if f == nil then
      local raw = redis.call("HGET", flowKey("fl"), id)
      local ok, decoded = false, nil
      if raw then ok, decoded = pcall(cjson.decode, raw) end
      f = ok and type(decoded) == "table" and decoded or {}
      if type(f.p) ~= "table" then f.p = {} end
      byId[id] = f
      order[#order + 1] = id
    end
    local lane, waiting, index = spec.p[k + 1], spec.p[k + 2], spec.p[k + 3]
    local known = false
    for j = 1, #f.p do
      local d = f.p[j]
      if d.l == lane and d.i == waiting and d.x == index then known = true end
    end
    if not known then f.p[#f.p + 1] = { l = lane, i = waiting, x = index } end
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
return { putReply, meta.fq and "flows" or "" }
