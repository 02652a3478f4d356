--[[
  The record's side of renaming an identity (src/store/identityStore.ts, `rename`): its new
  externalId entry lives in another slot, so the rename is three steps, and this script is the
  first and the last of them, run on the record.

    mark:   the live identity of the workspace, still named ARGV[5], is being renamed to ARGV[6]
            (`renamingTo`): a claim of ARGV[6]'s entry that names it is then this rename's, not a
            leftover to free (claim in identityStore.ts).
    commit: if it is still named ARGV[5] and being renamed to ARGV[6], it takes the new name and
            the other fields to set, every node is told, and the write's audit entry is appended
            to its outbox (same tag as the record).
    unmark: forgets a mark of ARGV[6] (a rename that lost its claim).

  KEYS[1]  the record (hash)
  KEYS[2]  the identity's audit outbox (stream)
  ARGV[1]  mode: mark, commit or unmark
  ARGV[2]  the workspace the identity must be of
  ARGV[3]  invalidation channel
  ARGV[4]  invalidation message
  ARGV[5]  the externalId it has (from)
  ARGV[6]  the externalId it takes (to)
  ARGV[7]  the audit entry (lua/includes/outbox.lua), for commit ('' otherwise)
  ARGV[8]  commit: n, the number of other fields to set beside the new name
  ARGV[9 … 8+2n]  commit: field, value pairs to set
  ARGV[9+2n …]    commit: fields to delete

  Returns 1 when done, -1 when there is no live record of the workspace, 0 when the record is
  no longer named ARGV[5] or (commit) being renamed to ARGV[6]; nothing is written then.
]]
--- @include "includes/liveRecord"
--- @include "includes/outbox"

local mode = ARGV[1]
if mode ~= 'mark' and mode ~= 'commit' and mode ~= 'unmark' then
  return redis.error_reply('rename-identity: unknown mode ' .. tostring(mode))
end
if not isLiveRecordOf(KEYS[1], ARGV[2]) then
  return -1
end
if mode == 'unmark' then
  if redis.call('HGET', KEYS[1], 'renamingTo') == ARGV[6] then
    redis.call('HDEL', KEYS[1], 'renamingTo')
  end
  return 1
end
if redis.call('HGET', KEYS[1], 'externalId') ~= ARGV[5] then
  return 0
end
if mode == 'mark' then
  redis.call('HSET', KEYS[1], 'renamingTo', ARGV[6])
  return 1
end
if redis.call('HGET', KEYS[1], 'renamingTo') ~= ARGV[6] then
  return 0
end
local entry = outboxEntry(ARGV[7])
redis.call('HSET', KEYS[1], 'externalId', ARGV[6])
redis.call('HDEL', KEYS[1], 'renamingTo')
local n = tonumber(ARGV[8]) or 0
if n > 0 then
  redis.call('HSET', KEYS[1], unpack(ARGV, 9, 8 + 2 * n))
end
if #ARGV >= 9 + 2 * n then
  redis.call('HDEL', KEYS[1], unpack(ARGV, 9 + 2 * n))
end
redis.call('PUBLISH', ARGV[3], ARGV[4])
appendOutbox(KEYS[2], entry)
return 1
