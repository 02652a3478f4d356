--[[
  Delete an identity: its record, its externalId (free to be taken again) and its place in the
  listing, tell every node, and append the write's audit entry. Keys that still name it resolve
  no identity any more.

  KEYS[1]  the workspace's externalIds (hash: externalId → identity id)
  KEYS[2]  the record (hash)
  KEYS[3]  the workspace's identity ids (zset)
  KEYS[4]  the workspace's audit log (stream)
  ARGV[1]  invalidation channel
  ARGV[2]  invalidation message
  ARGV[3]  the audit entry (lua/includes/audit.lua)

  Returns 1 when deleted, -1 when there is no such record (nothing written).
]]
--- @include "includes/audit"

local audit = auditEntry(ARGV[3])
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
appendAudit(KEYS[4], audit)
return 1
