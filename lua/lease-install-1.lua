--[[
  A lease the primary just granted or topped up, put where the region's nodes spend it
  (lua/lease-spend-1.lua).

  KEYS[1]  the lease hash
  ARGV[1]  leaseId
  ARGV[2]  granted      the tokens the primary moved into the lease
  ARGV[3]  lifetimeMs   how long it may be spent from now, on this Redis's clock: shorter than the
                        primary's lease by the round trip that got it and a margin for the clocks
  ARGV[4]  resetInMs    how soon the primary's bucket gains its next token, as it answered: each
                        spend answers that moment, on this Redis's clock
  ARGV[5]  keepMs       how long the hash outlives its lifetime (so that an expired lease is seen,
                        and counted, instead of vanishing)
  ARGV[6]  now          TEST ONLY: unix ms instead of the Redis clock; "" in production
  ARGV[7]  fromVersion  a top-up: the version it was asked at; the lease must still be at it, and
                        it gains the tokens, the next version and its new life. "" for a new lease
  ARGV[8]  version      a new lease's version (the primary's answer)

  Returns 1 installed, 0 not: another lease of the region is in place (a new lease: the caller
  gives it back), or the lease is gone or at another version (a top-up: its tokens stay with the
  primary until the lease ends there)
]]
--- @include "includes/bucket"

local leaseKey = KEYS[1]
local now = bucketClock(ARGV[6])
local lifetime = tonumber(ARGV[3])
local fromVersion = ARGV[7]

if fromVersion ~= nil and fromVersion ~= '' then
  local state = redis.call('HMGET', leaseKey, 'leaseId', 'version', 'expiresAt')
  if state[1] ~= ARGV[1] or state[2] ~= fromVersion or tonumber(state[3]) <= now then
    return 0
  end
  local tokens = redis.call('HINCRBY', leaseKey, 'tokens', tonumber(ARGV[2]))
  redis.call('HSET', leaseKey, 'version', tonumber(fromVersion) + 1, 'granted', tokens,
    'grantedAt', now, 'expiresAt', now + lifetime, 'reset', now + tonumber(ARGV[4]))
  redis.call('PEXPIRE', leaseKey, string.format('%d', lifetime + tonumber(ARGV[5])))
  return 1
end

local held = redis.call('HGET', leaseKey, 'expiresAt')
if held and tonumber(held) > now then
  return 0
end
redis.call('DEL', leaseKey)
redis.call('HSET', leaseKey, 'leaseId', ARGV[1], 'version', ARGV[8], 'tokens', ARGV[2],
  'granted', ARGV[2], 'grantedAt', now, 'expiresAt', now + lifetime,
  'reset', now + tonumber(ARGV[4]))
redis.call('PEXPIRE', leaseKey, string.format('%d', lifetime + tonumber(ARGV[5])))
return 1
