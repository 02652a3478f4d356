--[[
  Delete an identity: its record, its externalId (free to be taken again) and its place in the
  listing, and tell every node. Keys that still name it resolve no identity any more.

  KEYS[1]  the workspace's externalIds (hash: externalId → identity id)
  KEYS[2]  the record (hash)
  KEYS[3]  the workspace's identity ids (zset)
  ARGV[1]  invalidation channel
  ARGV[2]  invalidation message

  Returns 1 when deleted, -1 when there is no such record (nothing written).
]]
local record = redis.call('HMGET', KEYS[2], 'id', 'externalId')
if not record[1] then
  return -1
end
redis.call('DEL', KEYS[2])
if record[2] and redis.call('HGET', KEYS[1], record[2]) == record[1] then
  redis.call('HDEL', KEYS[1], record[2])
end
redis.call('ZREM', KEYS[3], record[1])
redis.call('PUBLISH', ARGV[1], ARGV[2])
return 1
