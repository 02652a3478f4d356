--[[
  Write a record (hash) unless a record (live, pending or a tombstone) is there already: the first
  step of an identity's creation (with `pending` and `pendingAudit`), and the copy that moves an
  identity or an API record of the previous layout (without). Nothing reads a pending record as
  live, and a move never overwrites what this release wrote.

  KEYS[1]  the record (hash)
  ARGV[1 …]  field, value pairs of the record

  Returns 1 when written, -1 when a record was there (nothing written).
]]
if redis.call('EXISTS', KEYS[1]) == 1 then
  return -1
end
redis.call('HSET', KEYS[1], unpack(ARGV))
return 1
