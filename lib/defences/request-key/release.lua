-- Layer 2: release a claim after the attempt failed before any money moved, so the caller may retry.
-- KEYS[1]  idem:{<caller>:<key>}   the request key (<…> are placeholders; the braces are literal)
-- ARGV[1]  the owner id that claimed the key
-- Returns  1 when the claim was this owner's and not yet done ("processing", or "unknown" once the bank
--          confirmed it has no charge), and is now deleted; 0 otherwise.
-- Publishes on the channel named KEYS[1] when deleted: a duplicate waiting (Prefer: wait) asks again, and may
--          now pay itself (watch.ts).
-- Slot     one key, so one slot on a Redis Cluster; its name carries the hash tag {<caller>:<key>}, which any
--          key added to this script must carry too (decision 020).
-- Never called after a charge: releasing then would let the retry charge the card again.
local current = redis.call('GET', KEYS[1])
if not current then
  return 0
end
local ok, record = pcall(cjson.decode, current)
if ok and record.owner == ARGV[1] and (record.state == 'processing' or record.state == 'unknown') then
  redis.call('DEL', KEYS[1])
  redis.call('PUBLISH', KEYS[1], 'changed')
  return 1
end
return 0
