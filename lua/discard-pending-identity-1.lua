--[[
  Undo an identity's creation that did not claim its externalId: the record goes, but only while
  it is still pending. A creation that committed first is left alone, and one that tries to
  commit after this finds nothing (commit-identity-2.lua answers -1).

  KEYS[1]  the identity record (hash)

  Returns 1 when discarded (the caller then takes its listing entry back), 0 when the record is
  live or a tombstone, -1 when there is no record.
]]
if redis.call('EXISTS', KEYS[1]) == 0 then
  return -1
end
if redis.call('HEXISTS', KEYS[1], 'pending') == 0 then
  return 0
end
redis.call('DEL', KEYS[1])
return 1
