--[[
  Write a key record and the sets of what it holds, unless a record (live, pending or a
  tombstone) is there already: the first step of a creation (with `pending`) and of moving a key
  of the previous layout (without). Nothing reads a pending record.

  KEYS[1]  the key record (hash)
  KEYS[2]  the ids of the permissions it holds (set)
  KEYS[3]  the ids of its roles (set)
  ARGV[1]  p: the number of permission ids
  ARGV[2]  r: the number of role ids
  ARGV[3 … 2+p]        permission ids
  ARGV[3+p … 2+p+r]    role ids
  ARGV[3+p+r …]        field, value pairs of the record

  Returns 1 when written, -1 when a record was there (nothing written).
]]
if redis.call('EXISTS', KEYS[1]) == 1 then
  return -1
end
local p = tonumber(ARGV[1])
local r = tonumber(ARGV[2])
redis.call('DEL', KEYS[2], KEYS[3])
if p > 0 then
  redis.call('SADD', KEYS[2], unpack(ARGV, 3, 2 + p))
end
if r > 0 then
  redis.call('SADD', KEYS[3], unpack(ARGV, 3 + p, 2 + p + r))
end
redis.call('HSET', KEYS[1], unpack(ARGV, 3 + p + r))
return 1
