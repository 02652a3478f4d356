--[[
  Find a rate-limit namespace by name, creating it on first use.

  KEYS[1]  the namespace record (hash: id, name, createdAt), by name
  KEYS[2]  the id → name index entry for the id in ARGV[1] (written only when this call creates)
  ARGV[1]  the id to give a new namespace
  ARGV[2]  the namespace name
  ARGV[3]  creation time, unix ms

  Returns the namespace id: the existing one, or ARGV[1] when this call created it.
]]
local existing = redis.call('HGET', KEYS[1], 'id')
if existing then
  return existing
end
redis.call('HSET', KEYS[1], 'id', ARGV[1], 'name', ARGV[2], 'createdAt', ARGV[3])
redis.call('SET', KEYS[2], ARGV[2])
return ARGV[1]
