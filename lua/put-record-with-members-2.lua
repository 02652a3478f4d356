--[[
  Write a record (hash) and its members (set) unless a record (live, pending or a tombstone) is
  there already: the first step of a role's (a permission's) creation, pending, and the copy that
  moves one of the previous layout. Both in one step, so a move run twice, or run beside a write
  to the moved role, never puts back a member the role no longer has.

  KEYS[1]  the record (hash)
  KEYS[2]  its members (set): a role's permission ids
  ARGV[1]  the number of members that follow
  ARGV[2 …] the members, then the record's fields: field, value, field, value …

  Returns 1 when written, -1 when a record was there (nothing written).
]]
if redis.call('EXISTS', KEYS[1]) == 1 then
  return -1
end
local members = tonumber(ARGV[1])
redis.call('HSET', KEYS[1], unpack(ARGV, 2 + members))
if members > 0 then
  redis.call('SADD', KEYS[2], unpack(ARGV, 2, 1 + members))
end
return 1
