--[[
  Remove a moved namespace's record, id entry and overrides from the previous layout (all under
  its workspace's tag), only if its overrides are still exactly those the move copied: an
  override that a node of the previous release wrote or deleted since the move read them would
  otherwise be lost, so the move copies again and retries instead.

  KEYS[1]  the namespace record of the previous layout (hash)
  KEYS[2]  its id → name entry (string)
  KEYS[3]  its overrides (hash: identifier → JSON)
  KEYS[4]  its identifiers in order (zset)
  ARGV[1]  the overrides the move copied, JSON {"<identifier>": "<JSON of the override>", …}

  Returns 1 when removed, 0 when the overrides changed since (nothing removed).
]]
local copied = cjson.decode(ARGV[1])
local current = redis.call('HGETALL', KEYS[3])
local left = 0
for _ in pairs(copied) do
  left = left + 1
end
for i = 1, #current, 2 do
  if copied[current[i]] ~= current[i + 1] then
    return 0
  end
  left = left - 1
end
if left ~= 0 then
  return 0
end
redis.call('DEL', KEYS[1], KEYS[2], KEYS[3], KEYS[4])
return 1
