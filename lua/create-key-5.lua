--[[
  Create a key record and its three index entries in one step.

  KEYS[1]  the API record (hash); must exist and not carry `deletedAt`
  KEYS[2]  the key record (hash) to create
  KEYS[3]  the workspace's hash index (hash: sha256 → keyId)
  KEYS[4]  the API's keys in creation order (zset: keyId scored by sequence)
  KEYS[5]  the API's keys of this owner (zset); written only when ARGV[4] is "1"
  ARGV[1]  keyId
  ARGV[2]  the key's hash
  ARGV[3]  invalidation channel
  ARGV[4]  "1" when the key has an ownerId
  ARGV[5]  invalidation message (clears negative cache entries for this hash on every node)
  ARGV[6…] field, value pairs of the record

  Returns the key's sequence number (≥ 1), or
    -1  the API does not exist or is being deleted
    -2  a key with this hash exists already
]]
if redis.call('EXISTS', KEYS[1]) == 0 or redis.call('HEXISTS', KEYS[1], 'deletedAt') == 1 then
  return -1
end
if redis.call('HEXISTS', KEYS[3], ARGV[2]) == 1 then
  return -2
end
local seq = redis.call('HINCRBY', KEYS[1], 'keySeq', 1)
local fields = { 'seq', seq, 'version', 1 }
for i = 6, #ARGV do
  fields[#fields + 1] = ARGV[i]
end
redis.call('HSET', KEYS[2], unpack(fields))
redis.call('HSET', KEYS[3], ARGV[2], ARGV[1])
redis.call('ZADD', KEYS[4], seq, ARGV[1])
if ARGV[4] == '1' then
  redis.call('ZADD', KEYS[5], seq, ARGV[1])
end
redis.call('PUBLISH', ARGV[3], ARGV[5])
return seq
