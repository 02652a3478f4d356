--[[
  Change a key's usage credits atomically with concurrent verifications, after applying a refill
  point that has passed.

  KEYS[1]  the credits hash: { remaining, lastRefillAt, appliedReset }
  ARGV[1]  op: "set", "increment" or "decrement"
  ARGV[2]  value (integer ≥ 0)
  ARGV[3]  refillBoundary  unix ms of the latest refill point; "" when credits never refill
  ARGV[4]  refillAmount    what `remaining` resets to at a refill point not yet applied
  ARGV[5]  resetAt         unix ms of the record's latest "set remaining": refills count from it
  ARGV[6]  resetNonce      the key record's latest "set remaining" (its version), applied first
                           if newer than the one the hash applied last
  ARGV[7]  resetValue      what that write set `remaining` to

  Returns the new remaining, or -1 when a decrement would go below zero (nothing written).
]]
local op = ARGV[1]
local value = tonumber(ARGV[2])
local state = redis.call('HMGET', KEYS[1], 'remaining', 'lastRefillAt', 'appliedReset')
local remaining = tonumber(state[1]) or 0
local lastRefillAt = tonumber(state[2]) or 0
local applied = tonumber(state[3]) or 0
if tonumber(ARGV[6]) > applied then
  remaining = tonumber(ARGV[7])
  lastRefillAt = tonumber(ARGV[5])
  applied = tonumber(ARGV[6])
end
if ARGV[3] ~= '' and lastRefillAt < tonumber(ARGV[3]) then
  remaining = tonumber(ARGV[4])
  lastRefillAt = tonumber(ARGV[3])
end
if op == 'set' then
  remaining = value
elseif op == 'increment' then
  remaining = remaining + value
else
  if value > remaining then
    return -1
  end
  remaining = remaining - value
end
redis.call('HSET', KEYS[1], 'remaining', remaining, 'lastRefillAt', lastRefillAt, 'appliedReset', applied)
return remaining
