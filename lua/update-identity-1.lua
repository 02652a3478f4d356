--[[
  Change fields of an identity that still exists (a write racing a deletion must not leave a
  partial record behind), and tell every node.

  KEYS[1]  the record (hash)
  ARGV[1]  invalidation channel
  ARGV[2]  invalidation message
  ARGV[3]  n: the number of fields to set
  ARGV[4 … 3+2n]  field, value pairs to set
  ARGV[4+2n …]    fields to delete

  Returns 1 when updated, -1 when there is no such record (nothing written).
]]
if redis.call('EXISTS', KEYS[1]) == 0 then
  return -1
end
local n = tonumber(ARGV[3])
if n > 0 then
  redis.call('HSET', KEYS[1], unpack(ARGV, 4, 3 + 2 * n))
end
if #ARGV >= 4 + 2 * n then
  redis.call('HDEL', KEYS[1], unpack(ARGV, 4 + 2 * n))
end
redis.call('PUBLISH', ARGV[1], ARGV[2])
return 1
