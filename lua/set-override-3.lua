--[[
  Create or replace a namespace's override for one identifier (or identifier prefix ending in *)
  in the identifier's shard, keeping the id of an override that already exists, tell every node,
  and append the write's audit entry to the outbox under the shard's tag, which the node relays
  to the workspace's log (lua/includes/outbox.lua). The caller checked that the namespace exists:
  namespaces are never deleted, so that stays true.

  KEYS[1]  the shard's overrides (hash: identifier → JSON { id, limit, duration, async? })
  KEYS[2]  the shard's identifiers in order (zset, all scores 0, for paging by identifier)
  KEYS[3]  the audit outbox of the shard's tag (stream)
  ARGV[1]  identifier
  ARGV[2]  the id to give a new override
  ARGV[3]  the override as JSON without its id: {"limit":…,"duration":…[,"async":…]}
  ARGV[4]  invalidation channel
  ARGV[5]  invalidation message
  ARGV[6]  the outbox entry (lua/includes/outbox.lua), appended when the override is written

  Returns the override id.
]]
--- @include "includes/outbox"

local audit = outboxEntry(ARGV[6])
local id = ARGV[2]
local current = redis.call('HGET', KEYS[1], ARGV[1])
if current then
  id = cjson.decode(current).id
end
local override = cjson.decode(ARGV[3])
override.id = id
redis.call('HSET', KEYS[1], ARGV[1], cjson.encode(override))
redis.call('ZADD', KEYS[2], 0, ARGV[1])
redis.call('PUBLISH', ARGV[4], ARGV[5])
appendOutbox(KEYS[3], audit)
return id
