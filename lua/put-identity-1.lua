--[[
  Write an identity record unless a record (live, pending or a tombstone) is there already: the
  first step of a creation (with `pending` and `pendingAudit`) and of moving an identity of the
  previous layout (without). Nothing reads a pending record as an identity.

  KEYS[1]  the identity record (hash)
  ARGV[1 …]  field, value pairs of the record

  Returns 1 when written, -1 when a record was there (nothing written).
]]
if redis.call('EXISTS', KEYS[1]) == 1 then
  return -1
end
redis.call('HSET', KEYS[1], unpack(ARGV))
return 1
