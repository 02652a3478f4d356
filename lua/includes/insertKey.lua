--[[
  Adding a key to an API, for createKey (one key) and importKeys (a batch, all checked before any
  is written). A key is a table:
    api       the API record (hash); must exist and not carry `deletedAt`
    record    the key record (hash) to create
    apiKeys   the API's keys in creation order (zset: keyId scored by sequence)
    owner     the API's keys of this owner (zset); written only when hasOwner is "1"
    keyId, hash, hasOwner ("1" or "0"), message (its invalidation message)
    fields    field, value pairs of the record (the record also gets `seq` and `version` 1)
  hashes is the workspace's hash index (hash: sha256 → keyId).

  keyRefusal returns nil when the key can be added, or else the script's answer:
    -1  the API does not exist or is being deleted
    -2  a key with this hash exists already
  insertKey writes the record and its index entries, announces it on `channel`, and returns the
  key's sequence number.
]]
local function keyRefusal(key, hashes)
  if redis.call('EXISTS', key.api) == 0 or redis.call('HEXISTS', key.api, 'deletedAt') == 1 then
    return -1
  end
  if redis.call('HEXISTS', hashes, key.hash) == 1 then
    return -2
  end
  return nil
end

local function insertKey(key, hashes, channel)
  local seq = redis.call('HINCRBY', key.api, 'keySeq', 1)
  redis.call('HSET', key.record, 'seq', seq, 'version', 1, unpack(key.fields))
  redis.call('HSET', hashes, key.hash, key.keyId)
  redis.call('ZADD', key.apiKeys, seq, key.keyId)
  if key.hasOwner == '1' then
    redis.call('ZADD', key.owner, seq, key.keyId)
  end
  redis.call('PUBLISH', channel, key.message)
  return seq
end
