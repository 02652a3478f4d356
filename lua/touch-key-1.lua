--[[
  Note a key's latest verification (`lastUsedAt`, unix ms) on its record, never moving it back:
  nodes flush what they saw on timers of their own, so an older time may arrive after a newer.
  A record that is gone or not live (pending, deleted) is left as it is: a flush racing a deletion
  must not leave a fragment of a record behind.

  KEYS[1]  the key's record (hash)
  ARGV[1]  the time of the latest verification a node saw (unix ms)

  Returns 1 when set, 0 when the record holds that time or a later one, -1 when there is no live
  record.
]]
if redis.call('HEXISTS', KEYS[1], 'id') == 0 or redis.call('HEXISTS', KEYS[1], 'pending') == 1
  or redis.call('HEXISTS', KEYS[1], 'deletedAt') == 1 then
  return -1
end
local seen = tonumber(ARGV[1])
local held = tonumber(redis.call('HGET', KEYS[1], 'lastUsedAt') or '0')
if seen <= held then
  return 0
end
redis.call('HSET', KEYS[1], 'lastUsedAt', ARGV[1])
return 1
