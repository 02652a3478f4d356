--[[
  Token bucket: take `cost` tokens if the bucket holds at least that many.

  KEYS[1]  the bucket hash: { tokens, last }. `last` is the refill point in unix ms: refills happen
           in whole intervals counted from it, so no time is lost to rounding.
  ARGV[1]  limit           bucket size in tokens (a new bucket starts full)
  ARGV[2]  refillRate      tokens added per whole interval
  ARGV[3]  refillInterval  interval in ms
  ARGV[4]  cost            tokens to take; 0 reads the bucket without spending
  ARGV[5]  now             TEST ONLY: unix ms to use instead of the Redis clock; "" in production

  Returns { allowed (1|0), remaining, reset, now }
    remaining  tokens left after this call
    reset      unix ms at which the bucket next gains a token (last + refillInterval)
    now        the clock reading used, so callers never consult a clock of their own

  A full bucket is normalised to (limit, now): the state at any instant then depends only on the
  admitted requests, so an expired hash (dropped when it would be full) is the same as a fresh one,
  and a refusal or a zero-cost read can skip the write without changing any later answer.
]]
local key = KEYS[1]
local limit = tonumber(ARGV[1])
local refillRate = tonumber(ARGV[2])
local refillInterval = tonumber(ARGV[3])
local cost = tonumber(ARGV[4])

local now
if ARGV[5] ~= nil and ARGV[5] ~= '' then
  now = tonumber(ARGV[5])
else
  local t = redis.call('TIME')
  now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
end

local tokens = limit
local last = now
local state = redis.call('HMGET', key, 'tokens', 'last')
if state[1] and state[2] then
  tokens = tonumber(state[1])
  last = tonumber(state[2])
  if now > last then
    local intervals = math.floor((now - last) / refillInterval)
    if intervals > 0 then
      -- Compare before multiplying out: intervals * refillRate can pass 2^53.
      if intervals >= math.ceil((limit - tokens) / refillRate) then
        tokens = limit
      else
        tokens = tokens + intervals * refillRate
      end
      last = last + intervals * refillInterval
    end
  end
end
if tokens >= limit then
  tokens = limit
  last = now
end

if cost > tokens then
  return { 0, tokens, last + refillInterval, now }
end
if cost == 0 then
  return { 1, tokens, last + refillInterval, now }
end

tokens = tokens - cost
redis.call('HSET', key, 'tokens', tokens, 'last', last)
-- Expire exactly when the bucket would be full again: from then on it equals a fresh bucket.
local intervalsToFull = math.ceil((limit - tokens) / refillRate)
local ttl = last + intervalsToFull * refillInterval - now
if ttl < 1 then ttl = 1 end
-- %d: from 1e17 on, Lua would print the number as "1e+17", which PEXPIRE refuses.
redis.call('PEXPIRE', key, string.format('%d', ttl))
return { 1, tokens, last + refillInterval, now }
