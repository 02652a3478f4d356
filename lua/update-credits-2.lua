--[[
  Change a key's usage credits atomically with concurrent verifications, after applying the
  record's latest "set remaining" and a refill point that has passed, and append the write's audit
  entry to the outbox under the key's tag (lua/includes/outbox.lua), which the node relays to the
  workspace's stream: the credits hash is in another slot than the stream.

  KEYS[1]  the credits hash: { remaining, lastRefillAt, appliedReset }
  KEYS[2]  the audit outbox of the key's tag (stream)
  ARGV[1]  op: "set", "increment", "decrement", or "decrementToZero" (a decrement past zero
           leaves zero: Unkey v2's keys.updateCredits)
  ARGV[2]  value (integer ≥ 0)
  ARGV[3]  refillBoundary  unix ms of the latest refill point; "" when credits never refill
  ARGV[4]  refillAmount    what `remaining` resets to at a refill point not yet applied
  ARGV[5]  resetNonce      the key record's latest "set remaining" (its version), applied first
                           if newer than the one the hash applied last
  ARGV[6]  resetValue      what that write set `remaining` to
  ARGV[7]  resetAt         unix ms of that write: refills count from it
  ARGV[8]  the outbox entry (lua/includes/outbox.lua), appended when the credits change
  ARGV[3…7] are the credit arguments of includes/credits.lua, in its order.

  Returns the new remaining, or -1 when a "decrement" would go below zero (nothing written).
]]
--- @include "includes/credits"
--- @include "includes/outbox"

local audit = outboxEntry(ARGV[8])
local op = ARGV[1]
local value = tonumber(ARGV[2])
local remaining, lastRefillAt, applied = readCredits(KEYS[1], 3)
if op == 'set' then
  remaining = value
elseif op == 'increment' then
  remaining = remaining + value
elseif op == 'decrementToZero' then
  remaining = math.max(remaining - value, 0)
else
  if value > remaining then
    return -1
  end
  remaining = remaining - value
end
writeCredits(KEYS[1], remaining, lastRefillAt, applied)
appendOutbox(KEYS[2], audit)
return remaining
