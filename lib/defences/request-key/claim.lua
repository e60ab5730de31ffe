-- Layer 2: claim a request key, or read what is already there.
-- KEYS[1]  idem:{<caller>:<key>}   the request key (<…> are placeholders; the braces are literal)
-- ARGV[1]  the "processing" record to store: JSON carrying this attempt's owner id, the fingerprint and
--          the time of the claim (its lease is judged from it; the record itself lives as long as ARGV[2])
-- ARGV[2]  how long the record lives, in milliseconds (the outcome's retention: a claim whose holder died
--          must still be there when a retry comes, so that the retry asks the bank before it pays again)
-- Returns  the claim's fencing token (an integer) when this request now owns the key (or did already: the same
--          claim sent again, below); otherwise the record
--          already stored (processing, unknown or done), which the caller turns into "in progress", a
--          takeover, a replay or a mismatch.
-- Slot     one key, so one slot on a Redis Cluster; its name carries the hash tag {<caller>:<key>}, which any
--          key added to this script must carry too (decision 020).
-- One script, one round trip: the claim and the read of the first request's record cannot interleave.
-- The token is Redis's own clock in milliseconds: it keeps rising across claims of the key, even after
-- the key was released or expired, as long as that clock does not go back. A new claim starts a chain of
-- takeovers: its token is the chain's first (firstFence), which every takeover keeps.
-- Sent twice: a client sends a command again when a dropped connection lost its answer (ioredis does, by
-- default), and the first run may have claimed the key. A key holding this very record (this attempt's owner id,
-- new for every attempt, and the same time) holds that first run's claim: it is this attempt's, with its token.
local current = redis.call('GET', KEYS[1])
if current then
  local ok, held = pcall(cjson.decode, current)
  local record = cjson.decode(ARGV[1])
  if ok and type(held) == 'table' and held.state == 'processing' and held.owner == record.owner
    and held.since == record.since then
    return held.fence
  end
  return current
end
local time = redis.call('TIME')
local fence = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
local record = cjson.decode(ARGV[1])
record.fence = fence
record.firstFence = fence
redis.call('SET', KEYS[1], cjson.encode(record), 'PX', ARGV[2])
return fence
