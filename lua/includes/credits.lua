--[[
  Usage credits as they stand now, for every script that reads or changes them.

  The credits hash holds { remaining, lastRefillAt, appliedReset }. Two things may have happened
  since it was last written; they are applied in this order:
  - the key record's latest "set remaining" (createKey, updateKey). The record is the source of
    truth, so such a write is one atomic record write, and the credits hash applies it here, once,
    when it first sees it: only when its nonce (the record version that wrote it) is newer than
    the one the hash applied last, so a node still holding an older record cannot roll the credits
    back. Refills are counted from its time.
  - a refill point passed since the last one applied.

  Every script passes these as five ARGV in one order, starting at ARGV[first]:
    refillBoundary  unix ms of the latest refill point; "" when credits never refill
    refillAmount    what `remaining` resets to at a refill point not yet applied
    resetNonce      the record's latest "set remaining": the version that wrote it
    resetValue      what that write set `remaining` to
    resetAt         unix ms of that write

  readCredits returns remaining, lastRefillAt, appliedReset, and whether a reset or a refill
  changed them (then the hash needs writing even if nothing is spent).
]]
local function readCredits(creditsKey, first)
  local state = redis.call('HMGET', creditsKey, 'remaining', 'lastRefillAt', 'appliedReset')
  local remaining = tonumber(state[1]) or 0
  local lastRefillAt = tonumber(state[2]) or 0
  local applied = tonumber(state[3]) or 0
  local changed = false
  local resetNonce = tonumber(ARGV[first + 2]) or 0
  if resetNonce > applied then
    remaining = tonumber(ARGV[first + 3])
    lastRefillAt = tonumber(ARGV[first + 4])
    applied = resetNonce
    changed = true
  end
  local refillBoundary = ARGV[first]
  if refillBoundary ~= '' and lastRefillAt < tonumber(refillBoundary) then
    remaining = tonumber(ARGV[first + 1])
    lastRefillAt = tonumber(refillBoundary)
    changed = true
  end
  return remaining, lastRefillAt, applied, changed
end

local function writeCredits(creditsKey, remaining, lastRefillAt, applied)
  redis.call('HSET', creditsKey, 'remaining', remaining, 'lastRefillAt', lastRefillAt,
    'appliedReset', applied)
end
