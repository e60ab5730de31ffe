-- Layer 2: renew a claim this attempt still holds (before it calls the bank, after a long pause), or resume
-- one it took over once the bank said nothing of the chain can land (its doubt is then cleared).
-- KEYS[1]  idem:{<caller>:<key>}   the request key (<…> are placeholders; the braces are literal)
-- ARGV[1]  the owner id that claimed the key
-- ARGV[2]  its fencing token
-- ARGV[3]  the time of the renewal (the lease runs again from it)
-- ARGV[4]  '1' to clear the time the outcome came into doubt (a resumption), '0' to keep it
-- Returns  1 when renewed; 0 when the claim is no longer this attempt's (it was taken over: stop).
-- Slot     one key, so one slot on a Redis Cluster; its name carries the hash tag {<caller>:<key>}, which any
--          key added to this script must carry too (decision 020).
local current = redis.call('GET', KEYS[1])
if not current then
  return 0
end
local ok, record = pcall(cjson.decode, current)
if not ok or record.state ~= 'processing' or record.owner ~= ARGV[1] or record.fence ~= tonumber(ARGV[2]) then
  return 0
end
record.since = tonumber(ARGV[3])
if ARGV[4] == '1' then
  record.unknownSince = nil
end
redis.call('SET', KEYS[1], cjson.encode(record), 'KEEPTTL')
return 1
