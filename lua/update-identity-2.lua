--[[
  Change fields of an identity that still exists (a write racing a deletion must not leave a
  partial record behind), tell every node, and append the write's audit entry.

  KEYS[1]  the record (hash)
  KEYS[2]  the workspace's audit log (stream)
  ARGV[1]  invalidation channel
  ARGV[2]  invalidation message
  ARGV[3]  the audit entry (lua/includes/audit.lua)
  ARGV[4]  n: the number of fields to set
  ARGV[5 … 4+2n]  field, value pairs to set
  ARGV[5+2n …]    fields to delete

  Returns 1 when updated, -1 when there is no such record (nothing written).
]]
--- @include "includes/audit"

local audit = auditEntry(ARGV[3])
if redis.call('EXISTS', KEYS[1]) == 0 then
  return -1
end
local n = tonumber(ARGV[4])
if n > 0 then
  redis.call('HSET', KEYS[1], unpack(ARGV, 5, 4 + 2 * n))
end
if #ARGV >= 5 + 2 * n then
  redis.call('HDEL', KEYS[1], unpack(ARGV, 5 + 2 * n))
end
redis.call('PUBLISH', ARGV[1], ARGV[2])
appendAudit(KEYS[2], audit)
return 1
