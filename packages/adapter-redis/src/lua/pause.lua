-- tasklane: pause — pause (ARGV[7] = "1") or resume ("0") the lane.
-- KEYS: the eighteen lane keys (see _common.lua)
-- ARGV: common 1..6; ARGV[7] "1" pause / "0" resume
-- Returns: 1

if ARGV[7] == "1" then
  redis.call("HSET", KM, "paused", "1")
else
  redis.call("HDEL", KM, "paused")
  if meta.paused then wake() end
end
return 1
