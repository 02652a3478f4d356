--[[
  Change fields of a live identity (a write racing a deletion or an unfinished creation must not
  leave a partial record behind), tell every node, and append the write's audit entry to the
  identity's outbox (same tag as the record).

  KEYS[1]  the record (hash)
  KEYS[2]  the identity's audit outbox (stream)
  ARGV[1]  the workspace the identity must be of (ids are not tagged by workspace any more)
  ARGV[2]  invalidation channel
  ARGV[3]  invalidation message
  ARGV[4]  the audit entry (lua/includes/outbox.lua)
  ARGV[5]  n: the number of fields to set
  ARGV[6 … 5+2n]  field, value pairs to set
  ARGV[6+2n …]    fields to delete

  Returns 1 when updated, -1 when there is no live record of the workspace (nothing written).
]]
--- @include "includes/outbox"

local entry = outboxEntry(ARGV[4])
if redis.call('EXISTS', KEYS[1]) == 0 or redis.call('HEXISTS', KEYS[1], 'pending') == 1
  or redis.call('HEXISTS', KEYS[1], 'deletedAt') == 1
  or redis.call('HGET', KEYS[1], 'workspaceId') ~= ARGV[1] then
  return -1
end
local n = tonumber(ARGV[5])
if n > 0 then
  redis.call('HSET', KEYS[1], unpack(ARGV, 6, 5 + 2 * n))
end
if #ARGV >= 6 + 2 * n then
  redis.call('HDEL', KEYS[1], unpack(ARGV, 6 + 2 * n))
end
redis.call('PUBLISH', ARGV[2], ARGV[3])
appendOutbox(KEYS[2], entry)
return 1
