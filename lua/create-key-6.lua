--[[
  Create a key record and its three index entries in one step.

  KEYS[1]  the API record (hash); must exist and not carry `deletedAt`
  KEYS[2]  the key record (hash) to create
  KEYS[3]  the workspace's hash index (hash: sha256 → keyId)
  KEYS[4]  the API's keys in creation order (zset: keyId scored by sequence)
  KEYS[5]  the API's keys of this owner (zset); written only when ARGV[4] is "1"
  ARGV[1]  keyId
  ARGV[2]  the key's hash
  ARGV[3]  invalidation channel
  ARGV[4]  "1" when the key has an ownerId
  KEYS[6]  the workspace's audit log (stream)
  ARGV[5]  invalidation message (clears negative cache entries for this hash on every node)
  ARGV[6]  the audit entry (lua/includes/audit.lua), appended when the key is created
  ARGV[7…] field, value pairs of the record

  Returns the key's sequence number (≥ 1), or
    -1  the API does not exist or is being deleted
    -2  a key with this hash exists already
]]
--- @include "includes/insertKey"
--- @include "includes/audit"

local key = {
  api = KEYS[1], record = KEYS[2], apiKeys = KEYS[4], owner = KEYS[5],
  keyId = ARGV[1], hash = ARGV[2], hasOwner = ARGV[4], message = ARGV[5], fields = {},
}
for i = 7, #ARGV do
  key.fields[i - 6] = ARGV[i]
end
local audit = auditEntry(ARGV[6])
local refusal = keyRefusal(key, KEYS[3])
if refusal then
  return refusal
end
local seq = insertKey(key, KEYS[3], ARGV[3])
appendAudit(KEYS[6], audit)
return seq
