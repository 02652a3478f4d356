--[[
  Delete a live key if nobody changed it since the caller read it: the first step of a deletion,
  after which the key verifies nowhere. Its sets and credits go with it (they share its slot);
  the record is replaced by a tombstone that keeps what the rest of the deletion needs (its
  hash, API and owner, to clear the indexes in other slots) and fences a late migration or
  repair from bringing the key back. Every node hears of it, and the audit entry goes to the
  key's outbox.

  KEYS[1]  the key record (hash)
  KEYS[2]  the ids of its permissions (set)
  KEYS[3]  the ids of its roles (set)
  KEYS[4]  its credits (hash)
  KEYS[5]  its audit outbox (stream)
  ARGV[1]  the version the caller read
  ARGV[2]  invalidation channel
  ARGV[3]  invalidation message
  ARGV[4]  the audit entry (lua/includes/outbox.lua)
  ARGV[5]  deletedAt (unix ms)
  ARGV[6]  how long the tombstone stays (ms)

  Returns 1 when deleted, -1 when there is no live key, -2 when its version moved on.
]]
--- @include "includes/liveKey"
--- @include "includes/outbox"
--- @include "includes/tombstone"

local entry = outboxEntry(ARGV[4])
return changeLiveKey(KEYS[1], ARGV[1], function()
  redis.call('DEL', KEYS[2], KEYS[3], KEYS[4])
  replaceWithTombstone(KEYS[1], { 'id', 'workspaceId', 'apiId', 'hash', 'ownerId', 'seq' }, ARGV[5],
    ARGV[6])
  redis.call('PUBLISH', ARGV[2], ARGV[3])
  appendOutbox(KEYS[5], entry)
end)
