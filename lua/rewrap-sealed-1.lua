--[[
  Replace a recoverable key's sealed form with the same secret re-wrapped under another vault key
  (`keyward vault rotate`), only if the record still holds the sealed form the caller read and is
  a live key: a pending creation or a tombstone is left alone, and a record that changed since
  the read (another run rewrapped it, it was deleted) is never overwritten with a stale value.
  Nothing else of the record changes: the plaintext is the same, so no node needs to hear of it
  (a node still holding the old form in its cache holds the old vault key too).

  KEYS[1]  the key record (hash)
  ARGV[1]  the sealed form the caller read
  ARGV[2]  the re-wrapped sealed form

  Returns 1 when written, 0 when the record is not live or no longer holds ARGV[1].
]]
--- @include "includes/liveKey"

if not isLiveKey(KEYS[1]) or redis.call('HGET', KEYS[1], 'sealed') ~= ARGV[1] then
  return 0
end
redis.call('HSET', KEYS[1], 'sealed', ARGV[2])
return 1
