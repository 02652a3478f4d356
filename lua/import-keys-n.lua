--[[
  Import a batch of keys, all or nothing: every API must exist and every hash must be new, or
  nothing is written. All keys of a batch belong to one workspace, so they share one slot. Each
  key created appends its own audit entry.

  KEYS[1]            the workspace's hash index (hash: sha256 → keyId)
  KEYS[2]            the workspace's audit log (stream)
  KEYS[3 + 4(i-1)]   item i: its API record (hash; must exist without `deletedAt`)
  KEYS[4 + 4(i-1)]   item i: the key record (hash) to create
  KEYS[5 + 4(i-1)]   item i: the API's keys in creation order (zset)
  KEYS[6 + 4(i-1)]   item i: the API's keys of the item's owner (zset; written when it has one)
  ARGV[1]            invalidation channel
  ARGV[2]            number of items
  then per item:     keyId, hash, "1"|"0" (has an owner), invalidation message, its audit entry
                     (lua/includes/audit.lua), n (field count), and n field, value pairs of the
                     record

  Returns { 1 } on success, or { -1, i } (item i's API is missing or being deleted), or
  { -2, i } (item i's hash exists already).
]]
--- @include "includes/insertKey"
--- @include "includes/audit"

local count = tonumber(ARGV[2])
local items = {}
local at = 3
for i = 1, count do
  local item = {
    keyId = ARGV[at], hash = ARGV[at + 1], hasOwner = ARGV[at + 2], message = ARGV[at + 3],
    audit = auditEntry(ARGV[at + 4]),
  }
  local n = tonumber(ARGV[at + 5])
  item.fields = {}
  for j = 1, 2 * n do
    item.fields[j] = ARGV[at + 5 + j]
  end
  at = at + 6 + 2 * n
  local base = 3 + 4 * (i - 1)
  item.api, item.record, item.apiKeys, item.owner = KEYS[base], KEYS[base + 1], KEYS[base + 2], KEYS[base + 3]
  items[i] = item
end

for i, item in ipairs(items) do
  local refusal = keyRefusal(item, KEYS[1])
  if refusal then
    return { refusal, i }
  end
end

for _, item in ipairs(items) do
  insertKey(item, KEYS[1], ARGV[1])
  appendAudit(KEYS[2], item.audit)
end
return { 1 }
