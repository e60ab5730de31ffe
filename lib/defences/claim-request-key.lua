-- Layer 2: claim a request key (SET NX PX), or read what is already there.
-- KEYS[1]  idem:{caller}:{key}
-- ARGV[1]  the "processing" record to store: JSON carrying this attempt's owner id and the fingerprint
-- ARGV[2]  the processing lease in milliseconds (short: a crashed owner must not block retries for long)
-- Returns  nil when this request now owns the key; otherwise the record already stored (processing,
--          unknown or done), which the caller turns into "in progress", a replay or a mismatch.
-- One script, one round trip: the claim and the read of the first request's record cannot interleave.
if redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2]) then
  return nil
end
return redis.call('GET', KEYS[1])
