--[[
  Create a permission or a role: its record, and its name in the workspace's index of names of
  that kind, together or not at all, so two creations of one name cannot both succeed.

  KEYS[1]  the workspace's names of this kind (hash: name → id)
  KEYS[2]  the new record (hash)
  ARGV[1]  the name
  ARGV[2]  the new id
  ARGV[3…] the record's fields: field, value, field, value…

  Returns 1 when created, -1 when the name is taken in this workspace (nothing written).
]]
if redis.call('HEXISTS', KEYS[1], ARGV[1]) == 1 then
  return -1
end
redis.call('HSET', KEYS[1], ARGV[1], ARGV[2])
redis.call('HSET', KEYS[2], unpack(ARGV, 3))
return 1
