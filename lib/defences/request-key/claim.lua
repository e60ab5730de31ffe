-- Layer 2: claim a request key, or read what is already there.
-- KEYS[1]  idem:{<caller>:<key>}   the request key (<…> are placeholders; the braces are literal)
-- ARGV[1]  the "processing" record to store: JSON carrying this attempt's owner id, the fingerprint and
--          the time of the claim (its lease is judged from it; the record itself lives as long as ARGV[2])
-- ARGV[2]  how long the record lives, in milliseconds (the outcome's retention: a claim whose holder died
--          must still be there when a retry comes, so that the retry asks the bank before it pays again)
-- Returns  the claim's fencing token (an integer) when this request now owns the key; otherwise the record
--          already stored (processing, unknown or done), which the caller turns into "in progress", a
--          takeover, a replay or a mismatch.
-- Slot     one key, so one slot on a Redis Cluster; its name carries the hash tag {<caller>:<key>}, which any
--          key added to this script must carry too (decision 020).
-- One script, one round trip: the claim and the read of the first request's record cannot interleave.
-- The token is Redis's own clock in milliseconds: it keeps rising across claims of the key, even after
-- the key was released or expired, as long as that clock does not go back. A new claim starts a chain of
-- takeovers: its token is the chain's first (firstFence), which every takeover keeps.
local current = redis.call('GET', KEYS[1])
if current then
  return current
end
local time = redis.call('TIME')
local fence = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
local record = cjson.decode(ARGV[1])
record.fence = fence
record.firstFence = fence
redis.call('SET', KEYS[1], cjson.encode(record), 'PX', ARGV[2])
return fence
