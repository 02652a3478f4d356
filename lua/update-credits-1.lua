--[[
  Change a key's usage credits atomically with concurrent verifications, after applying a refill
  point that has passed.

  KEYS[1]  the credits hash: { remaining, lastRefillAt }
  ARGV[1]  op: "set", "increment" or "decrement"
  ARGV[2]  value (integer ≥ 0)
  ARGV[3]  refillBoundary  unix ms of the latest refill point; "" when credits never refill
  ARGV[4]  refillAmount    what `remaining` resets to at a refill point not yet applied
  ARGV[5]  now             unix ms, recorded as lastRefillAt when "set" creates the hash

  Returns the new remaining, or
    -1  a decrement would go below zero (nothing written)
    -2  increment or decrement of a key without credits (nothing written)
]]
local op = ARGV[1]
local value = tonumber(ARGV[2])
local state = redis.call('HMGET', KEYS[1], 'remaining', 'lastRefillAt')
if state[1] == false and op ~= 'set' then
  return -2
end
local remaining = tonumber(state[1]) or 0
local lastRefillAt = tonumber(state[2]) or tonumber(ARGV[5])
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
redis.call('HSET', KEYS[1], 'remaining', remaining, 'lastRefillAt', lastRefillAt)
return remaining
