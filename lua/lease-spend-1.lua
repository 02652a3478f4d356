--[[
  A verification spent from its region's lease, on the node-local Redis (docs/guarantees.md
  "Leases"): the tokens come from the lease the primary granted (lua/lease-grant-1.lua), with no
  round trip to it. A lease that cannot pay, or ends soon, is closed here, atomically, so that
  exactly one node of the region returns what it has left.

  KEYS[1]  the lease hash: { leaseId, tokens, granted, grantedAt, expiresAt, reset }
  ARGV[1]  cost            tokens to take
  ARGV[2]  now             TEST ONLY: unix ms instead of the Redis clock; "" in production
  ARGV[3]  renewWithinMs   a lease ending sooner than this is closed (and renewed by the caller)

  Returns { status, tokens, reset, now, leaseId, granted, grantedAt }
    status     1 spent: `tokens` left in the lease
               2 closed: the caller returns `tokens` unspent of lease `leaseId` (granted
                 `granted` tokens at `grantedAt`, this Redis's clock) with its next grant
               3 no lease
               4 expired: its tokens are lost to this region; the primary has them back
    reset      the reset the primary answered when it granted the lease
]]
--- @include "includes/bucket"

local leaseKey = KEYS[1]
local cost = tonumber(ARGV[1])
local now = bucketClock(ARGV[2])
local renewWithin = tonumber(ARGV[3])

local state = redis.call('HMGET', leaseKey, 'leaseId', 'tokens', 'granted', 'grantedAt',
  'expiresAt', 'reset')
if not state[1] then
  return { 3, 0, 0, now, 0, 0, 0 }
end
local tokens = tonumber(state[2])
local expiresAt = tonumber(state[5])
local reset = tonumber(state[6])
local leaseId = tonumber(state[1])
if expiresAt <= now then
  redis.call('DEL', leaseKey)
  return { 4, tokens, reset, now, leaseId, tonumber(state[3]), tonumber(state[4]) }
end
if tokens >= cost and expiresAt - now > renewWithin then
  tokens = redis.call('HINCRBY', leaseKey, 'tokens', -cost)
  return { 1, tokens, reset, now, leaseId, 0, 0 }
end
redis.call('DEL', leaseKey)
return { 2, tokens, reset, now, leaseId, tonumber(state[3]), tonumber(state[4]) }
