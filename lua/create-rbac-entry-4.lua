--[[
  Create a permission or a role: its record, its name in the workspace's index of names of that
  kind, (for a role) the ids of its permissions and the write's audit entry, together or not at
  all, so two creations of one name cannot both succeed; and tell every node, whose view of the
  workspace's permissions and roles is stale from now.

  KEYS[1]  the workspace's names of this kind (hash: name → id)
  KEYS[2]  the new record (hash)
  KEYS[3]  the new entry's members (set): a role's permission ids; untouched when ARGV[6] is 0
  KEYS[4]  the workspace's audit log (stream)
  ARGV[1]  the name
  ARGV[2]  the new id
  ARGV[3]  invalidation channel
  ARGV[4]  invalidation message
  ARGV[5]  the audit entry (lua/includes/audit.lua), appended when the entry is created
  ARGV[6]  the number of members that follow
  ARGV[7…] the members, then the record's fields: field, value, field, value…

  Returns 1 when created, -1 when the name is taken in this workspace (nothing written).
]]
--- @include "includes/audit"

local audit = auditEntry(ARGV[5])
if redis.call('HEXISTS', KEYS[1], ARGV[1]) == 1 then
  return -1
end
local members = tonumber(ARGV[6])
redis.call('HSET', KEYS[1], ARGV[1], ARGV[2])
redis.call('HSET', KEYS[2], unpack(ARGV, 7 + members))
if members > 0 then
  redis.call('SADD', KEYS[3], unpack(ARGV, 7, 6 + members))
end
redis.call('PUBLISH', ARGV[3], ARGV[4])
appendAudit(KEYS[4], audit)
return 1
