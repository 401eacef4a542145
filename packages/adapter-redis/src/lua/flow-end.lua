-- (flow.lua's end, after put's body: see flow.lua)
-- put refused its arguments: nothing was written
if type(putReply) == "table" and putReply.err then return putReply end
local spec = cjson.decode(flowSpec)
local created = {}
for k = 1, #spec do
  local i, id, runAt, links = spec[k][1], spec[k][2], spec[k][3], spec[k][4]
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
  flushAll()
end
return { putReply, meta.fq and "flows" or "" }
