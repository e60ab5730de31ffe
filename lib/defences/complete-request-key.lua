-- Layer 2: replace the record of a key this attempt owns (store the final outcome, or mark it unknown).
-- KEYS[1]  idem:{caller}:{key}
-- ARGV[1]  the owner id that claimed the key
-- ARGV[2]  the new record (JSON)
-- ARGV[3]  its time to live in milliseconds (24 h for a final outcome)
-- Returns  1 when written; 0 when another attempt owns the key now (this one is late: it must not
--          overwrite the newer owner's claim). A key whose lease ran out with nobody else claiming it
--          is written too: the outcome is final, and every later retry should get it.
local current = redis.call('GET', KEYS[1])
if current then
  local ok, record = pcall(cjson.decode, current)
  if not ok or record.owner ~= ARGV[1] then
    return 0
  end
end
redis.call('SET', KEYS[1], ARGV[2], 'PX', ARGV[3])
return 1
