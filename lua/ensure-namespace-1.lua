--[[
  Find a rate-limit namespace by name, creating it on first use. The record decides which id a
  name has: the id → name entry is in another slot (the id's), written before this call with the
  fresh id, and counts only once this record names that id (docs/redis.md, "Writes across
  slots").

  KEYS[1]  the namespace record (hash: id, name, createdAt), by name
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
return ARGV[1]
