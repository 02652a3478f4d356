--[[
  Relay one entry of an audit outbox (lua/includes/outbox.lua) to its shard of the workspace's
  audit log, once: the marker, set in the same step, says it was relayed, so a relay run again (by
  a node that died before deleting the entry from the outbox, or by two nodes at once) appends
  nothing.

  KEYS[1]  the shard of the workspace's audit log, keyward:audit:{<ws>.<tag>} (stream)
  KEYS[2]  the marker of the outbox entry, keyward:audit:{<ws>.<tag>}:relayed:<token>
  ARGV[1]  how long the marker lives (ms): far longer than a relayed entry stays in its outbox
  ARGV[2]  the audit entry (lua/includes/audit.lua), the outbox entry's fields and its time

  Returns 1 when appended, 0 when the entry was relayed before (nothing written).
]]
--- @include "includes/audit"

local audit = auditEntry(ARGV[2])
if not redis.call('SET', KEYS[2], '1', 'NX', 'PX', ARGV[1]) then
  return 0
end
appendAudit(KEYS[1], audit)
return 1
