--[[
  Undo a creation that did not finish: the key record and its sets go, but only while the record
  is still pending. A creation that committed first is left alone, and a creation that tries to
  commit after this finds nothing (commit-key-2.lua answers -1).

  KEYS[1]  the key record (hash)
  KEYS[2]  the ids of its permissions (set)
  KEYS[3]  the ids of its roles (set)

  Returns 1 when discarded (the caller then takes its index entries back), 0 when the record is
  live or a tombstone, -1 when there is no record.
]]
if redis.call('EXISTS', KEYS[1]) == 0 then
  return -1
end
if redis.call('HEXISTS', KEYS[1], 'pending') == 0 then
  return 0
end
redis.call('DEL', KEYS[1], KEYS[2], KEYS[3])
return 1
