--[[
  The last step of a creation: the pending key record becomes live, every node hears of it, and
  the creation's audit entry goes to the key's outbox, all at once.

  KEYS[1]  the key record (hash), written pending by put-key-3.lua
  KEYS[2]  the key's audit outbox (stream)
  ARGV[1]  invalidation channel
  ARGV[2]  invalidation message (`key <ws> <hash> created`)
  ARGV[3]  the audit entry (lua/includes/outbox.lua)

  Returns the id of the outbox entry when committed (the caller relays it without reading the
  outbox first), '0' when it was committed before (nothing written), '-1' when there is no
  pending record to commit (a repair undid the creation, or a deletion followed it).
]]
--- @include "includes/outbox"

local entry = outboxEntry(ARGV[3])
if redis.call('EXISTS', KEYS[1]) == 0 or redis.call('HEXISTS', KEYS[1], 'deletedAt') == 1 then
  return '-1'
end
if redis.call('HEXISTS', KEYS[1], 'pending') == 0 then
  return '0'
end
redis.call('HDEL', KEYS[1], 'pending')
redis.call('PUBLISH', ARGV[1], ARGV[2])
return appendOutbox(KEYS[2], entry)
