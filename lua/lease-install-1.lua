--[[
  A lease the primary just granted, put where the region's nodes spend it (lua/lease-spend-1.lua).

  KEYS[1]  the lease hash
  ARGV[1]  leaseId
  ARGV[2]  granted      its tokens
  ARGV[3]  lifetimeMs   how long it may be spent, on this Redis's clock: shorter than the
                        primary's lease by the grant's round trip and a margin for the clocks
  ARGV[4]  resetInMs    how soon the primary's bucket gains its next token, as it answered the
                        grant: each spend answers that moment, on this Redis's clock
  ARGV[5]  keepMs       how long the hash outlives its lifetime (so that an expired lease is seen,
                        and counted, instead of vanishing)
  ARGV[6]  now          TEST ONLY: unix ms instead of the Redis clock; "" in production

  Returns 1 installed, 0 another lease of the region is in place (the caller gives this one back)
]]
--- @include "includes/bucket"

local leaseKey = KEYS[1]
local now = bucketClock(ARGV[6])
local held = redis.call('HGET', leaseKey, 'expiresAt')
if held and tonumber(held) > now then
  return 0
end
local lifetime = tonumber(ARGV[3])
redis.call('DEL', leaseKey)
redis.call('HSET', leaseKey, 'leaseId', ARGV[1], 'tokens', ARGV[2], 'granted', ARGV[2],
  'grantedAt', now, 'expiresAt', now + lifetime, 'reset', now + tonumber(ARGV[4]))
redis.call('PEXPIRE', leaseKey, string.format('%d', lifetime + tonumber(ARGV[5])))
return 1
