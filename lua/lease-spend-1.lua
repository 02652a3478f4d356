--[[
  A verification spent from its region's lease, on the node-local Redis (docs/guarantees.md
  "Leases"): the tokens come from the lease the primary granted (lua/lease-grant-1.lua), with no
  round trip to it. A lease that cannot pay, or ends soon, is closed here, atomically, so that
  exactly one node of the region returns what it has left.

  KEYS[1]  the lease hash: { leaseId, version, tokens, granted, grantedAt, expiresAt, reset }
           (`granted` and `grantedAt` of its latest grant or top-up)
  ARGV[1]  cost            tokens to take
  ARGV[2]  now             TEST ONLY: unix ms instead of the Redis clock; "" in production
  ARGV[3]  renewWithinMs   a lease ending sooner than this is closed (and renewed by the caller)

  Returns { status, tokens, reset, now, leaseId, granted, grantedAt, version, expiresAt }
    status     1 spent: `tokens` left in the lease
               2 closed: the caller returns `tokens` unspent of lease `leaseId` with its next
                 grant
               3 no lease
               4 expired: its tokens are lost to this region; the primary settles them
    reset      the reset the primary answered when it granted the lease
    granted, grantedAt, version, expiresAt   the lease's, as it stood (this Redis's clock): what a
               caller sizes its next grant or top-up by
]]
--- @include "includes/bucket"

local leaseKey = KEYS[1]
local cost = tonumber(ARGV[1])
local now = bucketClock(ARGV[2])
local renewWithin = tonumber(ARGV[3])

local state = redis.call('HMGET', leaseKey, 'leaseId', 'tokens', 'granted', 'grantedAt',
  'expiresAt', 'reset', 'version')
if not state[1] then
  return { 3, 0, 0, now, 0, 0, 0, 0, 0 }
end
local tokens = tonumber(state[2])
local expiresAt = tonumber(state[5])
local reply = { 0, tokens, tonumber(state[6]), now, tonumber(state[1]), tonumber(state[3]),
  tonumber(state[4]), tonumber(state[7]), expiresAt }
if expiresAt <= now then
  redis.call('DEL', leaseKey)
  reply[1] = 4
  return reply
end
if tokens >= cost and expiresAt - now > renewWithin then
  reply[1] = 1
  reply[2] = redis.call('HINCRBY', leaseKey, 'tokens', -cost)
  return reply
end
redis.call('DEL', leaseKey)
reply[1] = 2
return reply
