--[[
  Delete a root key's record, tell every node, and append the revocation's audit entry to the
  outbox under the root key's tag, only when there was a record (a revocation interrupted before
  its index step is run again: its record, and its entry, are already gone).

  KEYS[1]  the root key's record (hash), keyward:rootkey:{<hash>}
  KEYS[2]  the audit outbox of the root key's tag (stream)
  ARGV[1]  invalidation channel
  ARGV[2]  invalidation message
  ARGV[3]  the outbox entry (lua/includes/outbox.lua), appended when the record is deleted

  Returns 1 when deleted, -1 when there was no record (nothing written but the message).
]]
--- @include "includes/outbox"

local audit = outboxEntry(ARGV[3])
local deleted = redis.call('DEL', KEYS[1])
-- Told either way: a node may still hold a record that an interrupted revocation deleted.
redis.call('PUBLISH', ARGV[1], ARGV[2])
if deleted == 0 then
  return -1
end
appendOutbox(KEYS[2], audit)
return 1
