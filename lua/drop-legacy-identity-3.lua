--[[
  Remove an identity of the previous layout (all under its workspace's tag) once its record lives
  in the current one, or once it is deleted: the record, its externalId entry (only while it
  still names this identity) and its listing entry.

  KEYS[1]  the legacy identity record (hash)
  KEYS[2]  the workspace's legacy externalIds (hash: externalId → identity id)
  KEYS[3]  the workspace's legacy identity listing (zset)
  ARGV[1]  the identity id
  ARGV[2]  its externalId

  Returns 1.
]]
redis.call('DEL', KEYS[1])
if redis.call('HGET', KEYS[2], ARGV[2]) == ARGV[1] then
  redis.call('HDEL', KEYS[2], ARGV[2])
end
redis.call('ZREM', KEYS[3], ARGV[1])
return 1
