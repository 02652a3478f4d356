--[[
  Replace a role's permission ids, with the check that the role is there, the message to every
  node and the write's audit entry, in one step in the role's slot. The caller read the role
  through its name first; a role whose creation's node died after the claim is committed here.

  KEYS[1]  the role record (hash)
  KEYS[2]  its members (set: permission ids)
  KEYS[3]  its audit outbox (stream)
  ARGV[1]  the workspace it must be of
  ARGV[2]  invalidation channel
  ARGV[3]  invalidation message
  ARGV[4]  the audit entry (lua/includes/outbox.lua)
  ARGV[5 …] the permission ids

  Returns 1 when set, -1 when there is no role of the workspace (a tombstone, or none).
]]
--- @include "includes/outbox"
--- @include "includes/pending"

local entry = outboxEntry(ARGV[4])
if not isRecordOf(KEYS[1], ARGV[1]) then
  return -1
end
commitPending(KEYS[1], KEYS[3])
redis.call('DEL', KEYS[2])
if #ARGV > 4 then
  redis.call('SADD', KEYS[2], unpack(ARGV, 5))
end
redis.call('PUBLISH', ARGV[2], ARGV[3])
appendOutbox(KEYS[3], entry)
return 1
