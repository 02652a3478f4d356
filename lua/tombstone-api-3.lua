--[[
  Mark an API deleted. From this step on its keys no longer verify and no key can be added to it;
  the caller then purges the keys in batches and finally removes the record. A deletion that was
  interrupted is resumed by calling deleteApi again. The audit entry is appended by the call that
  marks it (a resumed deletion writes none: its write happened before).

  KEYS[1]  the API record (hash)
  KEYS[2]  the workspace's API index (zset)
  KEYS[3]  the workspace's audit log (stream)
  ARGV[1]  deletion time, unix ms
  ARGV[2]  invalidation channel
  ARGV[3]  invalidation message
  ARGV[4]  the audit entry (lua/includes/audit.lua)

  Returns 1 when the API is now marked deleted (or already was), -1 when it does not exist.
]]
--- @include "includes/audit"

local audit = auditEntry(ARGV[4])
if redis.call('EXISTS', KEYS[1]) == 0 then
  return -1
end
if redis.call('HSETNX', KEYS[1], 'deletedAt', ARGV[1]) == 1 then
  redis.call('ZREM', KEYS[2], redis.call('HGET', KEYS[1], 'id'))
  redis.call('PUBLISH', ARGV[2], ARGV[3])
  appendAudit(KEYS[3], audit)
end
return 1
