--[[
  Create a permission or a role: its record, and its name in the workspace's index of names of
  that kind, together or not at all, so two creations of one name cannot both succeed; and tell
  every node, whose view of the workspace's permissions and roles is stale from now.

  KEYS[1]  the workspace's names of this kind (hash: name → id)
  KEYS[2]  the new record (hash)
  ARGV[1]  the name
  ARGV[2]  the new id
  ARGV[3]  invalidation channel
  ARGV[4]  invalidation message
  ARGV[5…] the record's fields: field, value, field, value…

  Returns 1 when created, -1 when the name is taken in this workspace (nothing written).
]]
if redis.call('HEXISTS', KEYS[1], ARGV[1]) == 1 then
  return -1
end
redis.call('HSET', KEYS[1], ARGV[1], ARGV[2])
redis.call('HSET', KEYS[2], unpack(ARGV, 5))
redis.call('PUBLISH', ARGV[3], ARGV[4])
return 1
