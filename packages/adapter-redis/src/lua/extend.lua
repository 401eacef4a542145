-- tasklane: extend — move the lease of active jobs whose lock is current.
-- KEYS: the eighteen lane keys (see _common.lua)
-- ARGV: common 1..6; ARGV[7] leaseMs; then the locks' ids, then their tokens packed (see
--       lockIds)
-- Returns: one integer per lock: 1 ok, 2 canceled, 0 lost.
--
-- The common extend (a current lock, each id once in the call) takes a fast path: the
-- header's expiresAt is patched in place and the rest of the record is copied, with no
-- record table and no cache bookkeeping (heartbeats of long jobs call this for every
-- running job, again and again). Anything else (a lost or canceled lock, a malformed
-- record, an id named twice) takes the general path through decode() and lockStatus(). A
-- lock named again in the call is lost after its first use, as in ack, nack and release.

local lease = tonumber(ARGV[7])
local ids, twice, tokens = lockIds(8)
if ids == nil or lease == nil then
  return redis.error_reply(
    "TASKLANE_BAD_ARGUMENT extend takes leaseMs, ids, then one packed token per id")
end

-- Every lease moved in this call ends at the same time: its score text and its header
-- bytes are made once.
local exp = NOW + lease
local expText = string.format("%d", exp)
local expBytes = struct.pack(">d", exp)

local result = {}
local leases = {}
local used = {}
local nf = #rawWrites
local raws = redis.call("HMGET", KJ, unpack(ids))
for i = 1, #ids do
  local id = ids[i]
  local raw = raws[i]
  local token = tokenAt(tokens, i)
  local status = nil
  if raw and not twice and string.byte(raw, 1) == 64 + ACTIVE and #raw >= HEADER_LEN then
    local current, _, held = struct.unpack(">ddd", raw, AT_EXP)
    if current > NOW and held == token then
      status = 1
      rawWrites[nf + 1] = id
      -- expiresAt changes; every other byte is copied
      rawWrites[nf + 2] = string.sub(raw, 1, AT_EXP - 1) .. expBytes .. string.sub(raw, AT_EXP + 8)
      nf = nf + 2
    end
  end
  if status == nil then
    if cache[id] == nil then remember(id, raw) end
    local rec = cache[id]
    status = lockStatus(rec, token)
    if status == 1 and used[id] then status = 0 end
    if status == 1 then
      used[id] = true
      rec.exp = exp
      touch(id, rec)
    end
  end
  result[i] = status
  if status == 1 then
    leases[#leases + 1] = expText
    leases[#leases + 1] = id
  end
end
if #leases > 0 then
  redis.call("ZADD", KA, unpack(leases))
  flushRecords()
  lowerLeaseBound(exp)
  flushMeta()
end
return result
