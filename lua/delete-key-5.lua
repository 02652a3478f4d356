--[[
  Delete a key record and its index entries if nobody changed it since the caller read it, and
  append the write's audit entry.

  KEYS[1]  the key record (hash)
  KEYS[2]  the workspace's hash index (hash: sha256 → keyId)
  KEYS[3]  the API's keys (zset)
  KEYS[4]  the key's owner index (zset); used when ARGV[4] is "1"
  KEYS[5]  the workspace's audit log (stream)
  ARGV[1]  the version the caller read
  ARGV[2]  invalidation channel
  ARGV[3]  invalidation message
  ARGV[4]  "1" when the key has an owner index entry
  ARGV[5]  the audit entry (lua/includes/audit.lua), appended when the key is deleted

  Returns 1 when the key and its index entries are gone, -1 when the key does not exist, -2 when
  its version moved on (read again).
]]
--- @include "includes/recordVersion"
--- @include "includes/audit"

local audit = auditEntry(ARGV[5])
return changeAtVersion(KEYS[1], ARGV[1], function()
  local record = redis.call('HMGET', KEYS[1], 'id', 'hash')
  redis.call('DEL', KEYS[1])
  if redis.call('HGET', KEYS[2], record[2]) == record[1] then
    redis.call('HDEL', KEYS[2], record[2])
  end
  redis.call('ZREM', KEYS[3], record[1])
  if ARGV[4] == '1' then
    redis.call('ZREM', KEYS[4], record[1])
  end
  redis.call('PUBLISH', ARGV[2], ARGV[3])
  appendAudit(KEYS[5], audit)
end)
