-- The lab's global settings: merge a partial change into them, atomically (two tabs, or two quick changes
-- in one tab, each keep their change: a read-merge-write in two round trips would lose one of them).
-- KEYS[1]  lab:config
-- ARGV[1]  the settings to start from when none are stored yet (JSON: the deployment's defaults)
-- ARGV[2]  the change (JSON, already validated): { layers?, faults?, claims?, keys?, gateway? }, each partial
-- Returns  the stored settings after the change (JSON)
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
redis.call('SET', KEYS[1], encoded)
return encoded
