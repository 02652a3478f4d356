--[[
  Delete a namespace's override of one identifier, tell every node, and append the write's audit
  entry, only when there was such an override (a MULTI would append the entry of a deletion that
  found nothing).

  KEYS[1]  the overrides (hash: identifier → JSON { id, limit, duration, async? })
  KEYS[2]  the identifiers in order (zset)
  KEYS[3]  the workspace's audit log (stream)
  ARGV[1]  identifier
  ARGV[2]  invalidation channel
  ARGV[3]  invalidation message
  ARGV[4]  the audit entry (lua/includes/audit.lua), appended when the override is deleted

  Returns 1 when deleted, -1 when there was no such override (nothing written).
]]
--- @include "includes/audit"

local audit = auditEntry(ARGV[4])
if redis.call('HDEL', KEYS[1], ARGV[1]) == 0 then
  return -1
end
redis.call('ZREM', KEYS[2], ARGV[1])
redis.call('PUBLISH', ARGV[2], ARGV[3])
appendAudit(KEYS[3], audit)
return 1
