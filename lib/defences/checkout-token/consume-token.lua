-- Layer 1: consume a one-time checkout token, atomically.
-- KEYS[1]  checkout:token:<orderNo>:<caller>   the token issued to this caller for this order
-- ARGV[1]  the token the request presents
-- Returns  1 when the presented token was the stored one and is now deleted: this request may proceed;
--          0 otherwise (already used, expired, issued to another session, or forged).
-- Slot     one key, so one slot on a Redis Cluster. The name has no hash tag: nothing is used with it (a key
--          added to this script would need one shared with it, and the name would change; decision 020).
-- GET and DEL must be one step: with two round trips, two requests could both read the token before
-- either deletes it, and both would proceed.
if redis.call('GET', KEYS[1]) == ARGV[1] then
  return redis.call('DEL', KEYS[1])
end
return 0
