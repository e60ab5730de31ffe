-- The lab's global settings: merge a partial change into them, atomically (two tabs, or two quick changes
-- in one tab, each keep their change: a read-merge-write in two round trips would lose one of them).
-- KEYS[1]  lab:config (the global settings), or lab:mine:<session> (one attendee's own)
-- ARGV[1]  the settings to start from when none are stored yet (JSON: the deployment's defaults, or for an
--          attendee's own, the global settings of the moment)
-- ARGV[2]  the change (JSON, already validated): { layers?, faults?, claims?, keys?, gateway? }, each partial
-- ARGV[3]  optional: how long the stored settings live, in ms (an attendee's own expire; the global do not)
-- Returns  the stored settings after the change (JSON)
-- Slot     one key, so one slot on a Redis Cluster; no hash tag (the global settings and an attendee's are
--          read apart, never in one script or transaction; decision 020).
local current = redis.call('GET', KEYS[1])
local settings = cjson.decode(ARGV[1])
if current then
  local ok, stored = pcall(cjson.decode, current)
  if ok and type(stored) == 'table' then
    for section, values in pairs(stored) do
      if type(values) == 'table' and type(settings[section]) == 'table' then
        for name, value in pairs(values) do settings[section][name] = value end
      end
    end
  end
end
for section, values in pairs(cjson.decode(ARGV[2])) do
  if type(values) == 'table' and type(settings[section]) == 'table' then
    for name, value in pairs(values) do settings[section][name] = value end
  end
end
local encoded = cjson.encode(settings)
if ARGV[3] then
  redis.call('SET', KEYS[1], encoded, 'PX', ARGV[3])
else
  redis.call('SET', KEYS[1], encoded)
end
return encoded
