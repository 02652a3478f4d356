--[[
  Replace a webhook's sealed secret with the same secret re-wrapped under another vault key
  (`keyward vault rotate`), only if the webhook still holds the sealed form the caller read: a
  webhook deleted (or rotated by another run) since the read is never written.

  KEYS[1]  the webhook (hash)
  ARGV[1]  the sealed secret the caller read
  ARGV[2]  the re-wrapped sealed secret

  Returns 1 when written, 0 when the webhook is gone or no longer holds ARGV[1].
]]
if redis.call('HGET', KEYS[1], 'secret') ~= ARGV[1] then
  return 0
end
redis.call('HSET', KEYS[1], 'secret', ARGV[2])
return 1
