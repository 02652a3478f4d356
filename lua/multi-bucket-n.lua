--[[
  Several token buckets, and optionally usage credits, decided in one atomic step: every bucket
  must hold its cost and the credits theirs, or nothing is written anywhere. A verification's
  named limits that live on one Redis (and the key's credits, on the primary) are one call.

  KEYS[1]       the credits hash (includes/credits.lua); when ARGV[2] is not "1", any key of the
                call's hash tag (it is never read)
  KEYS[1 + i]   bucket i's hash: { tokens, last } (includes/bucket.lua)
  ARGV[1]  now             TEST ONLY: unix ms to use instead of the Redis clock; "" in production
  ARGV[2]  useCredits      "1" to check and spend credits, "0" to leave them alone
  ARGV[3]  creditCost      credits to spend (0 reads)
  ARGV[4]  refillBoundary  the credit arguments of includes/credits.lua, in its order ("" when
  ARGV[5]  refillAmount    credits are not used)
  ARGV[6]  resetNonce
  ARGV[7]  resetValue
  ARGV[8]  resetAt
  ARGV[9]  bucketCount     n, the number of buckets
  ARGV[10 + 4(i-1) …]  per bucket i: limit, refillRate, refillInterval, cost (0 reads; a negative
                       cost gives tokens back, never above the limit: a refund always passes)

  Returns { status, now, creditsRemaining, then per bucket: remaining, reset, exceeded }
    status            1 admitted, 0 refused by a bucket, 2 refused for lack of credits
    now               the clock reading used
    creditsRemaining  credits left after this call (-1 when credits were not checked, or a bucket
                      refused first)
    remaining         bucket i's tokens after this call (as they stand, when refused)
    reset             unix ms at which bucket i next gains a token
    exceeded          1 when bucket i alone could not pay its cost, else 0
]]
--- @include "includes/bucket"
--- @include "includes/credits"

local now = bucketClock(ARGV[1])
local useCredits = ARGV[2] == '1'
local creditCost = tonumber(ARGV[3])
local count = tonumber(ARGV[9])

-- 1. Every bucket as it stands now; any that cannot pay refuses the whole call.
local states = {}
local refused = false
for i = 1, count do
  local at = 10 + 4 * (i - 1)
  local limit = tonumber(ARGV[at])
  local refillRate = tonumber(ARGV[at + 1])
  local refillInterval = tonumber(ARGV[at + 2])
  local cost = tonumber(ARGV[at + 3])
  local tokens, last, leased, leasesUntil = readBucket(KEYS[1 + i], limit, refillRate,
    refillInterval, now)
  local exceeded = cost > tokens
  if exceeded then refused = true end
  states[i] = { limit, refillRate, refillInterval, cost, tokens, last, exceeded, leased,
    leasesUntil }
end

local function reply(status, credits, spent)
  local out = { status, now, credits }
  for i = 1, count do
    local s = states[i]
    local remaining, reset = s[5], s[6] + s[3]
    if spent and s[4] ~= 0 then
      remaining, reset = spendBucket(KEYS[1 + i], s[5], s[6], s[4], s[1], s[2], s[3], now, s[8],
        s[9])
    end
    out[#out + 1] = remaining
    out[#out + 1] = reset
    out[#out + 1] = s[7] and 1 or 0
  end
  return out
end

if refused then
  return reply(0, -1, false)
end

-- 2. Credits, with a refill point passed since the last one applied first.
local credits = -1
if useCredits then
  local lastRefillAt, applied, changed
  credits, lastRefillAt, applied, changed = readCredits(KEYS[1], 4)
  if creditCost > credits then
    return reply(2, credits, false)
  end
  if creditCost > 0 or changed then
    credits = credits - creditCost
    writeCredits(KEYS[1], credits, lastRefillAt, applied)
  end
end

-- 3. Every check passed: spend every bucket.
return reply(1, credits, true)
