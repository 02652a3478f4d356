--[[
  Note a key's latest verification (`lastUsedAt`, unix ms) beside its record, never moving it
  back: nodes flush what they saw on timers of their own, so an older time may arrive after a
  newer. It is a string of its own, not a field of the record, so that the record changes only
  when the key is written (caches, audits and `redis-cli` see it as it was made). A key whose
  record is gone or not live (pending, deleted) gets nothing; what a deleted key had expires.

  KEYS[1]  the key's record (hash)
  KEYS[2]  its last use (string, same tag)
  ARGV[1]  the time of the latest verification a node saw (unix ms)
  ARGV[2]  how long the note lives after its last write (ms)

  Returns 1 when set, 0 when it holds that time or a later one, -1 when there is no live record.
]]
if redis.call('HEXISTS', KEYS[1], 'id') == 0 or redis.call('HEXISTS', KEYS[1], 'pending') == 1
  or redis.call('HEXISTS', KEYS[1], 'deletedAt') == 1 then
  return -1
end
local seen = tonumber(ARGV[1])
local held = tonumber(redis.call('GET', KEYS[2]) or '0')
if seen <= held then
  return 0
end
redis.call('SET', KEYS[2], ARGV[1], 'PX', ARGV[2])
return 1
