--[[
  Delete a live identity: the first step of its deletion, after which no read finds it and keys
  that name it resolve no identity. The record is replaced by a tombstone that keeps what the
  rest of the deletion needs (its workspace and externalId, to free the externalId entry and the
  listing entry in other slots) and fences a late migration or repair from bringing it back.
  Every node hears of it, and the audit entry goes to the identity's outbox.

  KEYS[1]  the identity record (hash)
  KEYS[2]  its audit outbox (stream)
  ARGV[1]  the workspace the identity must be of (ids are not tagged by workspace any more)
  ARGV[2]  invalidation channel
  ARGV[3]  invalidation message
  ARGV[4]  the audit entry (lua/includes/outbox.lua)
  ARGV[5]  deletedAt (unix ms)
  ARGV[6]  how long the tombstone stays (ms)

  Returns 1 when deleted, -1 when there is no live identity of the workspace (pending, a
  tombstone, another workspace's, or none).
]]
--- @include "includes/liveRecord"
--- @include "includes/outbox"
--- @include "includes/tombstone"

local entry = outboxEntry(ARGV[4])
if not isLiveRecordOf(KEYS[1], ARGV[1]) then
  return -1
end
replaceWithTombstone(KEYS[1], { 'id', 'workspaceId', 'externalId' }, ARGV[5], ARGV[6])
redis.call('PUBLISH', ARGV[2], ARGV[3])
appendOutbox(KEYS[2], entry)
return 1
