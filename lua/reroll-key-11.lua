--[[
  Reroll a key: create a new key with the old one's settings and set the old one's expiry, in one
  step, if nobody changed the old key since the caller read it (compare-and-set on `version`).
  The new key gets copies of the old key's permission and role sets as they are now.

  KEYS[1]   the API record (hash); must exist and not carry `deletedAt`
  KEYS[2]   the old key record (hash)
  KEYS[3]   the new key record (hash) to create
  KEYS[4]   the workspace's hash index (hash: sha256 → keyId)
  KEYS[5]   the API's keys in creation order (zset: keyId scored by sequence)
  KEYS[6]   the API's keys of the owner (zset); the new key joins it when ARGV[8] is "1"
  KEYS[7]   the old key's permissions (set of ids)
  KEYS[8]   the old key's roles (set of ids)
  KEYS[9]   the new key's permissions (set of ids), written as a copy of KEYS[7]
  KEYS[10]  the new key's roles (set of ids), written as a copy of KEYS[8]
  KEYS[11]  the workspace's audit log (stream)
  ARGV[1]   the version of the old key the caller read
  ARGV[2]   invalidation channel
  ARGV[3]   the old key's invalidation message (every node reads its new `expires`)
  ARGV[4]   the old key's new `expires` (unix ms)
  ARGV[5]   the old key's `updatedAt` (unix ms)
  ARGV[6]   the new keyId
  ARGV[7]   the new key's hash
  ARGV[8]   "1" when the new key has an ownerId
  ARGV[9]   the new key's invalidation message (clears negative cache entries for its hash)
  ARGV[10]  the audit entry (lua/includes/audit.lua), appended when the key is rerolled
  ARGV[11…] field, value pairs of the new record

  Returns
     1  rerolled: the new key exists with its index entries, and the old one has its new expiry
    -1  the old key does not exist
    -2  the old key's version moved on (read again)
    -3  the API does not exist or is being deleted
    -4  a key with the new hash exists already
  Nothing is written unless it returns 1.
]]
--- @include "includes/recordVersion"
--- @include "includes/insertKey"
--- @include "includes/audit"

local new = {
  api = KEYS[1], record = KEYS[3], apiKeys = KEYS[5], owner = KEYS[6],
  keyId = ARGV[6], hash = ARGV[7], hasOwner = ARGV[8], message = ARGV[9], fields = {},
}
for i = 11, #ARGV do
  new.fields[i - 10] = ARGV[i]
end
local audit = auditEntry(ARGV[10])

local refusal = keyRefusal(new, KEYS[4])
if refusal == -1 then
  return -3
elseif refusal == -2 then
  return -4
end

return changeAtVersion(KEYS[2], ARGV[1], function()
  redis.call('HSET', KEYS[2], 'expires', ARGV[4], 'updatedAt', ARGV[5],
    'version', tonumber(ARGV[1]) + 1)
  redis.call('PUBLISH', ARGV[2], ARGV[3])
  -- A missing source set copies as no set at all.
  redis.call('SUNIONSTORE', KEYS[9], KEYS[7])
  redis.call('SUNIONSTORE', KEYS[10], KEYS[8])
  insertKey(new, KEYS[4], ARGV[2])
  appendAudit(KEYS[11], audit)
end)
