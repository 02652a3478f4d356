--[[
  Delete a permission or a role: its record, its name and its members, tell every node, and
  append the write's audit entry. Keys and roles that still name its id hold nothing by it any
  more: an id that resolves to no record is not a permission, so nothing else has to be
  rewritten in the same step.

  KEYS[1]  the workspace's names of this kind (hash: name → id)
  KEYS[2]  the record (hash)
  KEYS[3]  the entry's members (set: a role's permission ids)
  KEYS[4]  the workspace's audit log (stream)
  ARGV[1]  invalidation channel
  ARGV[2]  invalidation message
  ARGV[3]  the audit entry (lua/includes/audit.lua), appended when the entry is deleted

  Returns 1 when deleted, -1 when there is no such record (nothing written).
]]
--- @include "includes/audit"

local audit = auditEntry(ARGV[3])
local record = redis.call('HMGET', KEYS[2], 'id', 'name')
if not record[1] then
  return -1
end
redis.call('DEL', KEYS[2], KEYS[3])
if redis.call('HGET', KEYS[1], record[2]) == record[1] then
  redis.call('HDEL', KEYS[1], record[2])
end
redis.call('PUBLISH', ARGV[1], ARGV[2])
appendAudit(KEYS[4], audit)
return 1
