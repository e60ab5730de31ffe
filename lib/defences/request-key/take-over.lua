-- Layer 2: take over an abandoned claim (its holder stalled or died past its lease, or the outcome became
-- unknown), as a compare-and-set on exactly the claim the caller judged: its owner, its token and its last
-- renewal (a claim renewed since it was judged is alive again, and stays its holder's).
-- KEYS[1]  idem:{<caller>:<key>}   the request key (<…> are placeholders; the braces are literal)
-- ARGV[1]  the owner id the caller saw ('' for none)
-- ARGV[2]  the fencing token the caller saw
-- ARGV[3]  the time of the claim or its last renewal the caller saw (the record's `since`)
-- ARGV[4]  the new "processing" record (JSON, this attempt's owner id), without its tokens
-- ARGV[5]  how long the record lives, in milliseconds
-- Returns  the new fencing token (higher than the one seen) when the claim is now this attempt's (or was
--          already: the same takeover sent again); nil when
--          the record is no longer the one the caller saw (someone else moved first, or its holder renewed it).
-- Slot     one key, so one slot on a Redis Cluster; its name carries the hash tag {<caller>:<key>}, which any
--          key added to this script must carry too (decision 020).
-- The chain's first token (firstFence) is carried over: the oldest charge that may still land is not forgotten.
local current = redis.call('GET', KEYS[1])
if not current then
  return nil
end
local ok, record = pcall(cjson.decode, current)
if not ok or record.state == 'done' then
  return nil
end
local taken = cjson.decode(ARGV[4])
-- Sent twice (see claim.lua): the first run stored this very record (this attempt's owner id, the same time). The
-- claim is this attempt's, with that run's token.
if record.state == 'processing' and record.owner == taken.owner and record.since == taken.since then
  return record.fence
end
local owner = record.owner
if owner == nil or owner == cjson.null then
  owner = ''
end
if owner ~= ARGV[1] or record.fence ~= tonumber(ARGV[2]) or record.since ~= tonumber(ARGV[3]) then
  return nil
end
local time = redis.call('TIME')
local fence = math.max(record.fence + 1, tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000))
taken.fence = fence
taken.firstFence = record.firstFence or record.fence
redis.call('SET', KEYS[1], cjson.encode(taken), 'PX', ARGV[5])
return fence
