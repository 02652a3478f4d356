--[[
  A record of a workspace as the identity scripts see it: there, committed (no `pending`: a
  creation under way, docs/redis.md "Writes across slots"), no tombstone (`deletedAt`) and of the
  workspace `ws` the caller names. Anything else reads as no record: the script writes nothing.
]]
local function isLiveRecordOf(record, ws)
  return redis.call('EXISTS', record) == 1 and redis.call('HEXISTS', record, 'pending') == 0
    and redis.call('HEXISTS', record, 'deletedAt') == 0
    and redis.call('HGET', record, 'workspaceId') == ws
end
