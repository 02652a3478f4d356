--[[
  Create a permission or a role: its record, its name in the workspace's index of names of that
  kind, and (for a role) the ids of its permissions, together or not at all, so two creations of
  one name cannot both succeed; and tell every node, whose view of the workspace's permissions
  and roles is stale from now.

  KEYS[1]  the workspace's names of this kind (hash: name → id)
  KEYS[2]  the new record (hash)
  KEYS[3]  the new entry's members (set): a role's permission ids; untouched when ARGV[5] is 0
  ARGV[1]  the name
  ARGV[2]  the new id
  ARGV[3]  invalidation channel
  ARGV[4]  invalidation message
  ARGV[5]  the number of members that follow
  ARGV[6…] the members, then the record's fields: field, value, field, value…

  Returns 1 when created, -1 when the name is taken in this workspace (nothing written).
]]
if redis.call('HEXISTS', KEYS[1], ARGV[1]) == 1 then
  return -1
end
local members = tonumber(ARGV[5])
redis.call('HSET', KEYS[1], ARGV[1], ARGV[2])
redis.call('HSET', KEYS[2], unpack(ARGV, 6 + members))
if members > 0 then
  redis.call('SADD', KEYS[3], unpack(ARGV, 6, 5 + members))
end
redis.call('PUBLISH', ARGV[3], ARGV[4])
return 1
