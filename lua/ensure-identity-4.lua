--[[
  Find an identity by its externalId, creating it when there is none: the record, its externalId
  in the workspace's index, its id in the listing and the audit entry of its creation are written
  together or not at all, so two calls for one externalId, however close, make one identity.
  createIdentity calls it and refuses an answer that is not its own new id; a key linked by
  externalId calls it to find or make one.

  KEYS[1]  the workspace's externalIds (hash: externalId → identity id)
  KEYS[2]  the record to create (hash), named after ARGV[2]; untouched when the externalId is taken
  KEYS[3]  the workspace's identity ids (zset, every score 0, so in id order)
  KEYS[4]  the workspace's audit log (stream)
  ARGV[1]  the externalId
  ARGV[2]  the id to give a new identity
  ARGV[3]  invalidation channel
  ARGV[4]  invalidation message, published only when this call creates
  ARGV[5]  the audit entry (lua/includes/audit.lua), appended only when this call creates
  ARGV[6…] the new record: field, value, field, value…

  Returns the identity's id: the existing one, or ARGV[2] when this call created it.
]]
--- @include "includes/audit"

local audit = auditEntry(ARGV[5])
local existing = redis.call('HGET', KEYS[1], ARGV[1])
if existing then
  return existing
end
redis.call('HSET', KEYS[1], ARGV[1], ARGV[2])
redis.call('HSET', KEYS[2], unpack(ARGV, 6))
redis.call('ZADD', KEYS[3], 0, ARGV[2])
redis.call('PUBLISH', ARGV[3], ARGV[4])
appendAudit(KEYS[4], audit)
return ARGV[2]
