--[[
  The last step of an identity's creation, once its externalId entry names it: the pending record
  becomes live, every node hears of it, and the creation's audit entry (kept in the pending
  record as `pendingAudit`) goes to the identity's outbox, all at once. The entry travels with
  the record so that any node may commit an identity whose externalId claim it finds (a
  concurrent creation of the same externalId, the repair): the entry is appended exactly once,
  by whichever commit comes first.

  KEYS[1]  the identity record (hash), written pending by put-record-1.lua
  KEYS[2]  the identity's audit outbox (stream)
  ARGV[1]  invalidation channel
  ARGV[2]  invalidation message (`identity <ws> <id>`)

  Returns 1 when committed, 0 when it was committed before (nothing written), -1 when there is
  no pending record to commit (a repair undid the creation, or a deletion followed it).
]]
--- @include "includes/outbox"

if redis.call('EXISTS', KEYS[1]) == 0 or redis.call('HEXISTS', KEYS[1], 'deletedAt') == 1 then
  return -1
end
if redis.call('HEXISTS', KEYS[1], 'pending') == 0 then
  return 0
end
local entry = outboxEntry(redis.call('HGET', KEYS[1], 'pendingAudit'))
redis.call('HDEL', KEYS[1], 'pending', 'pendingAudit')
redis.call('PUBLISH', ARGV[1], ARGV[2])
appendOutbox(KEYS[2], entry)
return 1
