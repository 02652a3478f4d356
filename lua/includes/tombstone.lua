--[[
  Tombstones: a deleted record (a key, an identity) is replaced by one that keeps only what the
  rest of its deletion needs and fences a late migration or repair from bringing it back.

  replaceWithTombstone(record, fields, deletedAt, ttl) keeps the `fields` the record has, adds
  `deletedAt`, drops everything else and lets the tombstone expire after `ttl` ms.
]]
local function replaceWithTombstone(record, fields, deletedAt, ttl)
  local kept = redis.call('HMGET', record, unpack(fields))
  redis.call('DEL', record)
  local tombstone = { 'deletedAt', deletedAt }
  for i, field in ipairs(fields) do
    if kept[i] then
      tombstone[#tombstone + 1] = field
      tombstone[#tombstone + 1] = kept[i]
    end
  end
  redis.call('HSET', record, unpack(tombstone))
  redis.call('PEXPIRE', record, ttl)
end
