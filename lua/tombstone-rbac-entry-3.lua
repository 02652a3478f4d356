--[[
  The second step of a permission's or a role's deletion, once its name is released: the record
  becomes a tombstone (keeping what a repair needs, and fencing a late migration from bringing it
  back), a role's members go, and the deletion's audit entry goes to the record's outbox. A record
  still pending (its creation's node died after the claim) gets its creation's entry first.

  KEYS[1]  the record (hash)
  KEYS[2]  its members (set)
  KEYS[3]  its audit outbox (stream)
  ARGV[1]  the workspace it must be of
  ARGV[2]  the audit entry (lua/includes/outbox.lua)
  ARGV[3]  deletedAt (unix ms)
  ARGV[4]  how long the tombstone stays (ms)

  Returns 1 when deleted, -1 when there is no record of the workspace, or only a tombstone
  (nothing written).
]]
--- @include "includes/outbox"
--- @include "includes/pending"
--- @include "includes/tombstone"

local entry = outboxEntry(ARGV[2])
if not isRecordOf(KEYS[1], ARGV[1]) then
  return -1
end
commitPending(KEYS[1], KEYS[3])
replaceWithTombstone(KEYS[1], { 'id', 'workspaceId', 'name' }, ARGV[3], ARGV[4])
redis.call('DEL', KEYS[2])
appendOutbox(KEYS[3], entry)
return 1
