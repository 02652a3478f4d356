--[[
  Create or replace a namespace's override for one identifier (or identifier prefix ending in *),
  keeping the id of an override that already exists, tell every node, and append the write's
  audit entry.

  KEYS[1]  the overrides (hash: identifier → JSON { id, limit, duration, async? })
  KEYS[2]  the identifiers in order (zset, all scores 0, for paging by identifier)
  KEYS[3]  the namespace record; must exist
  KEYS[4]  the workspace's audit log (stream)
  ARGV[1]  identifier
  ARGV[2]  the id to give a new override
  ARGV[3]  the override as JSON without its id: {"limit":…,"duration":…[,"async":…]}
  ARGV[4]  invalidation channel
  ARGV[5]  invalidation message
  ARGV[6]  the audit entry (lua/includes/audit.lua), appended when the override is written

  Returns the override id, or "" when the namespace does not exist (nothing written).
]]
--- @include "includes/audit"

local audit = auditEntry(ARGV[6])
if redis.call('EXISTS', KEYS[3]) == 0 then
  return ''
end
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
appendAudit(KEYS[4], audit)
return id
