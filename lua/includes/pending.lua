--[[
  A pending record: written before its creation's point of no return (a claim in another slot),
  with the creation's audit entry in its field `pendingAudit`. A write that finds one whose
  creation passed that point (the caller checked the claim) commits it first, so that the log
  shows the creation before the write; requires lua/includes/outbox.lua.

  commitPending(record, outbox) appends the waiting entry to `outbox` and drops the marks, once:
  a record that is not pending is left as it is.
  isRecordOf(record, ws) says whether `record` is there, of workspace `ws`, and no tombstone
  (pending or not).
]]
local function isRecordOf(record, ws)
  return redis.call('EXISTS', record) == 1 and redis.call('HEXISTS', record, 'deletedAt') == 0
    and redis.call('HGET', record, 'workspaceId') == ws
end

local function commitPending(record, outbox)
  if redis.call('HEXISTS', record, 'pending') == 0 then
    return
  end
  local waiting = outboxEntry(redis.call('HGET', record, 'pendingAudit'))
  redis.call('HDEL', record, 'pending', 'pendingAudit')
  appendOutbox(outbox, waiting)
end
