-- Layer 2: replace the record of a key this attempt holds (store the final outcome, or mark it unknown).
-- KEYS[1]  idem:{<caller>:<key>}   the request key (<…> are placeholders; the braces are literal)
-- ARGV[1]  the owner id that claimed the key (or took it over)
-- ARGV[2]  the new record (JSON)
-- ARGV[3]  its time to live in milliseconds (24 h for a final outcome)
-- Returns  1 when written; 0 when another attempt holds the key now, or nobody does (this one is late: it
--          must not overwrite a newer claim, nor bring back a key that was released).
-- Publishes on the channel named KEYS[1] when written: a duplicate waiting for the outcome (Prefer: wait)
--          asks again (watch.ts). Not a key, so still one slot.
-- Slot     one key, so one slot on a Redis Cluster; its name carries the hash tag {<caller>:<key>}, which any
--          key added to this script must carry too (decision 020).
local current = redis.call('GET', KEYS[1])
if not current then
  return 0
end
-- Sent twice (see claim.lua): the key already holds exactly this record (its owner id, or its token and times for
-- "unknown"): written by the first run (or the same outcome stored for this claim by a duplicate that answered for
-- it). Written, either way.
if current == ARGV[2] then
  return 1
end
local ok, record = pcall(cjson.decode, current)
if not ok or record.owner ~= ARGV[1] or record.state == 'done' then
  return 0
end
redis.call('SET', KEYS[1], ARGV[2], 'PX', ARGV[3])
redis.call('PUBLISH', KEYS[1], 'changed')
return 1
