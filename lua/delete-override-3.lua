--[[
  Delete a namespace's override of one identifier from the identifier's shard, tell every node,
  and append the write's audit entry to the outbox under the shard's tag, only when there was
  such an override (a MULTI would append the entry of a deletion that found nothing).

  KEYS[1]  the shard's overrides (hash: identifier → JSON { id, limit, duration, async? })
  KEYS[2]  the shard's identifiers in order (zset)
  KEYS[3]  the audit outbox of the shard's tag (stream)
  ARGV[1]  identifier
  ARGV[2]  invalidation channel
  ARGV[3]  invalidation message
  ARGV[4]  the outbox entry (lua/includes/outbox.lua), appended when the override is deleted

  Returns 1 when deleted, -1 when there was no such override (nothing written).
]]
--- @include "includes/outbox"

local audit = outboxEntry(ARGV[4])
if redis.call('HDEL', KEYS[1], ARGV[1]) == 0 then
  return -1
end
redis.call('ZREM', KEYS[2], ARGV[1])
redis.call('PUBLISH', ARGV[2], ARGV[3])
appendOutbox(KEYS[3], audit)
return 1
