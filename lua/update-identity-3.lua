--[[
  Change fields of a live identity (a write racing a deletion or an unfinished creation must not
  leave a partial record behind) and, in the same step, its credit pool; tell every node, and
  append the write's audit entry to the identity's outbox (same tag as the record).

  KEYS[1]  the record (hash)
  KEYS[2]  the identity's audit outbox (stream)
  KEYS[3]  the identity's credits hash { remaining, lastRefillAt, appliedReset } (same tag)
  ARGV[1]  the workspace the identity must be of (ids are not tagged by workspace any more)
  ARGV[2]  invalidation channel
  ARGV[3]  invalidation message
  ARGV[4]  the audit entry (lua/includes/outbox.lua)
  ARGV[5]  credits: "" to leave them, "set" to set remaining to ARGV[6] counted from ARGV[7],
           "delete" to drop the pool (the record's `credits` field goes with the field deletes)
  ARGV[6]  remaining (with "set")
  ARGV[7]  unix ms refills are counted from (with "set")
  ARGV[8]  n: the number of fields to set
  ARGV[9 … 8+2n]  field, value pairs to set
  ARGV[9+2n …]    fields to delete

  A "set" marks the record's creation value (its reset, nonce 1) applied, so a node still holding
  the record as created cannot apply it over this one.

  Returns 1 when updated, -1 when there is no live record of the workspace (nothing written).
]]
--- @include "includes/liveRecord"
--- @include "includes/outbox"

local entry = outboxEntry(ARGV[4])
if not isLiveRecordOf(KEYS[1], ARGV[1]) then
  return -1
end
local n = tonumber(ARGV[8])
if n > 0 then
  redis.call('HSET', KEYS[1], unpack(ARGV, 9, 8 + 2 * n))
end
if #ARGV >= 9 + 2 * n then
  redis.call('HDEL', KEYS[1], unpack(ARGV, 9 + 2 * n))
end
if ARGV[5] == 'set' then
  redis.call('HSET', KEYS[3], 'remaining', ARGV[6], 'lastRefillAt', ARGV[7], 'appliedReset', 1)
elseif ARGV[5] == 'delete' then
  redis.call('DEL', KEYS[3])
end
redis.call('PUBLISH', ARGV[2], ARGV[3])
appendOutbox(KEYS[2], entry)
return 1
