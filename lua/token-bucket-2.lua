--[[
  Token bucket, and optionally usage credits, decided in one atomic step: take `cost` tokens if the
  bucket holds at least that many, then `creditCost` credits if that many are left. Either both
  are spent or nothing is written.

  KEYS[1]  the bucket hash: { tokens, last }. `last` is the refill point in unix ms: refills happen
           in whole intervals counted from it, so no time is lost to rounding.
  KEYS[2]  the credits hash: { remaining, lastRefillAt, appliedReset }; read only when ARGV[6] is
           "1". Same hash tag as KEYS[1] (the key id), so both live in one cluster slot.
  ARGV[1]  limit           bucket size in tokens (a new bucket starts full); "" = no bucket
  ARGV[2]  refillRate      tokens added per whole interval
  ARGV[3]  refillInterval  interval in ms
  ARGV[4]  cost            tokens to take; 0 reads the bucket without spending; a negative cost
                           gives tokens back (a refund), never above the limit
  ARGV[5]  now             TEST ONLY: unix ms to use instead of the Redis clock; "" in production
  ARGV[6]  "1" to check and spend credits, "0" to leave them alone
  ARGV[7]  creditCost      credits to spend (0 reads)
  ARGV[8]  refillBoundary  unix ms of the latest credit refill point; "" when credits never refill
  ARGV[9]  refillAmount    what `remaining` is reset to at a refill point not yet applied
  ARGV[10] resetNonce      the key record's latest "set remaining" (createKey, updateKey): the
                           version that wrote it; applied once, if newer than the last applied
  ARGV[11] resetValue      what that write set `remaining` to
  ARGV[12] resetAt         unix ms of that write: refills are counted from it
  ARGV[8…12] are the credit arguments of includes/credits.lua, in its order.
  Trailing arguments a call does not use may be left off (a bucket-only call sends ARGV[1..4]):
  a missing argument reads as nil, which the script treats like "".

  Returns { status, remaining, reset, now, creditsRemaining }
    status            1 admitted, 0 refused by the bucket, 2 refused for lack of credits
    remaining         tokens left after this call (0 when there is no bucket)
    reset             unix ms at which the bucket next gains a token (last + refillInterval)
    now               the clock reading used, so callers never consult a clock of their own
    creditsRemaining  credits left after this call (-1 when credits were not checked)

  A full bucket is normalised to (limit, now): the state at any instant then depends only on the
  admitted requests, so an expired hash (dropped when it would be full) is the same as a fresh one,
  and a refusal or a zero-cost read can skip the write without changing any later answer.
]]
--- @include "includes/credits"

local bucketKey = KEYS[1]
local creditsKey = KEYS[2]
local hasBucket = ARGV[1] ~= ''
local limit = tonumber(ARGV[1])
local refillRate = tonumber(ARGV[2])
local refillInterval = tonumber(ARGV[3])
local cost = tonumber(ARGV[4])
local useCredits = ARGV[6] == '1'
local creditCost = tonumber(ARGV[7])

local now
if ARGV[5] ~= nil and ARGV[5] ~= '' then
  now = tonumber(ARGV[5])
else
  local t = redis.call('TIME')
  now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
end

-- 1. The bucket as it stands now.
local tokens, last = 0, now
if hasBucket then
  tokens = limit
  local state = redis.call('HMGET', bucketKey, 'tokens', 'last')
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
    return { 0, tokens, last + refillInterval, now, -1 }
  end
end
local reset = hasBucket and last + refillInterval or now

-- 2. Credits, with a refill point passed since the last one applied first.
local credits = -1
if useCredits then
  local lastRefillAt, applied, changed
  credits, lastRefillAt, applied, changed = readCredits(creditsKey, 8)
  if creditCost > credits then
    return { 2, tokens, reset, now, credits }
  end
  if creditCost > 0 or changed then
    credits = credits - creditCost
    writeCredits(creditsKey, credits, lastRefillAt, applied)
  end
end

-- 3. Both checks passed: spend the tokens.
if not hasBucket or cost == 0 then
  return { 1, tokens, reset, now, credits }
end
tokens = tokens - cost
if tokens >= limit then
  -- A refund that fills the bucket: a full bucket and no hash are the same state.
  redis.call('DEL', bucketKey)
  return { 1, limit, now + refillInterval, now, credits }
end
redis.call('HSET', bucketKey, 'tokens', tokens, 'last', last)
-- Expire exactly when the bucket would be full again: from then on it equals a fresh bucket.
local intervalsToFull = math.ceil((limit - tokens) / refillRate)
local ttl = last + intervalsToFull * refillInterval - now
if ttl < 1 then ttl = 1 end
-- %d: from 1e17 on, Lua would print the number as "1e+17", which PEXPIRE refuses.
redis.call('PEXPIRE', bucketKey, string.format('%d', ttl))
return { 1, tokens, reset, now, credits }
