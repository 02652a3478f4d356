--[[
  Token bucket, and optionally usage credits, decided in one atomic step: take `cost` tokens if the
  bucket holds at least that many, then `creditCost` credits if that many are left. Either both
  are spent or nothing is written.

  KEYS[1]  the bucket hash: { tokens, last } (includes/bucket.lua).
  KEYS[2]  the credits hash: { remaining, lastRefillAt, appliedReset }; read only when ARGV[6] is
           "1". Same hash tag as KEYS[1] (the key id), so both live in one cluster slot.
  ARGV[1]  limit           bucket size in tokens (a new bucket starts full); "" = no bucket
  ARGV[2]  refillRate      tokens added per whole interval
  ARGV[3]  refillInterval  interval in ms
  ARGV[4]  cost            tokens to take; 0 reads the bucket without spending; a negative cost
                           gives tokens back (a refund), never above the limit
  ARGV[5]  now             TEST ONLY: unix ms to use instead of the Redis clock; "" in production
  ARGV[6]  "1" to check and spend credits, "0" to leave them alone
  ARGV[7]  creditCost      credits to spend (0 reads; a negative cost gives credits back: the
                           refund of an identity pool's credits when a later call refused)
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

  Several buckets decided together are multi-bucket-n.lua's; this one stays for the common case of
  one bucket, whose call sends the fewest arguments.
]]
--- @include "includes/bucket"
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
local now = bucketClock(ARGV[5])

-- 1. The bucket as it stands now.
local tokens, last, leased, leasesUntil = 0, now, 0, 0
if hasBucket then
  tokens, last, leased, leasesUntil = readBucket(bucketKey, limit, refillRate, refillInterval, now)
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
  if creditCost ~= 0 or changed then
    credits = credits - creditCost
    writeCredits(creditsKey, credits, lastRefillAt, applied)
  end
end

-- 3. Both checks passed: spend the tokens.
if not hasBucket or cost == 0 then
  return { 1, tokens, reset, now, credits }
end
tokens, reset = spendBucket(bucketKey, tokens, last, cost, limit, refillRate, refillInterval, now,
  leased, leasesUntil)
return { 1, tokens, reset, now, credits }
