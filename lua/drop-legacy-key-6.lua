--[[
  Remove a key of the previous layout (all under its workspace's tag) once its record lives in
  the current one, or once it is deleted: the record, its sets, and its index entries.

  KEYS[1]  the legacy key record (hash)
  KEYS[2]  its permission ids (set)
  KEYS[3]  its role ids (set)
  KEYS[4]  the workspace's legacy hash index (hash: sha256 → keyId)
  KEYS[5]  the API's legacy key index (zset)
  KEYS[6]  the API's legacy owner index (zset); any name when the key has no owner
  ARGV[1]  keyId
  ARGV[2]  the key's hash

  Returns 1.
]]
redis.call('DEL', KEYS[1], KEYS[2], KEYS[3])
if redis.call('HGET', KEYS[4], ARGV[2]) == ARGV[1] then
  redis.call('HDEL', KEYS[4], ARGV[2])
end
redis.call('ZREM', KEYS[5], ARGV[1])
redis.call('ZREM', KEYS[6], ARGV[1])
return 1
