--[[
  Update a key record if nobody changed it since the caller read it (compare-and-set on
  `version`), moving the key between owner indexes when its ownerId changes, and append the
  write's audit entry.

  KEYS[1]  the key record (hash)
  KEYS[2]  the owner index the key leaves (zset); used when ARGV[4] is "1"
  KEYS[3]  the owner index the key joins (zset); used when ARGV[5] is "1"
  KEYS[4]  the workspace's audit log (stream)
  ARGV[1]  the version the caller read
  ARGV[2]  invalidation channel
  ARGV[3]  invalidation message
  ARGV[4]  "1" to remove the key from KEYS[2]
  ARGV[5]  "1" to add the key to KEYS[3]
  ARGV[6]  the audit entry (lua/includes/audit.lua), appended when the record is updated
  ARGV[7]  n: the number of fields to set
  ARGV[8 … 7+2n]  field, value pairs to set
  ARGV[8+2n …]    fields to delete

  Returns 1 when the record is updated, -1 when the key does not exist, -2 when its version moved
  on (read again).
]]
--- @include "includes/recordVersion"
--- @include "includes/audit"

local audit = auditEntry(ARGV[6])
return changeAtVersion(KEYS[1], ARGV[1], function()
  local n = tonumber(ARGV[7])
  local set = { 'version', tonumber(ARGV[1]) + 1 }
  for i = 8, 7 + 2 * n do
    set[#set + 1] = ARGV[i]
  end
  redis.call('HSET', KEYS[1], unpack(set))
  if #ARGV >= 8 + 2 * n then
    redis.call('HDEL', KEYS[1], unpack(ARGV, 8 + 2 * n))
  end
  local id = redis.call('HGET', KEYS[1], 'id')
  if ARGV[4] == '1' then
    redis.call('ZREM', KEYS[2], id)
  end
  if ARGV[5] == '1' then
    redis.call('ZADD', KEYS[3], redis.call('HGET', KEYS[1], 'seq'), id)
  end
  redis.call('PUBLISH', ARGV[2], ARGV[3])
  appendAudit(KEYS[4], audit)
end)
