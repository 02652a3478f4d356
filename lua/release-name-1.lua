--[[
  The first step of a permission's or a role's deletion, and its point of no return: its name
  leaves the workspace's index of names (only while the name is still its), so that no node's
  view of the workspace (built from the index) holds it any more, and every node hears of it.

  KEYS[1]  the workspace's names of this kind (hash: name → id)
  ARGV[1]  the name
  ARGV[2]  the id
  ARGV[3]  invalidation channel
  ARGV[4]  invalidation message

  Returns 1 when released, 0 when the name was not this id's (nothing written).
]]
if redis.call('HGET', KEYS[1], ARGV[1]) ~= ARGV[2] then
  return 0
end
redis.call('HDEL', KEYS[1], ARGV[1])
redis.call('PUBLISH', ARGV[3], ARGV[4])
return 1
