--[[
  A region's lease on a consistent bucket, on the primary (docs/guarantees.md "Leases"): in one
  atomic step, take back what the region returns of its previous lease, spend the verification's
  own tokens, and move a slice of what is left into a new lease that the region spends on its
  node-local Redis (lua/lease-spend-1.lua) without asking again.

  KEYS[1]  the bucket hash (includes/bucket.lua; leases are fields of it)
  ARGV[1]  limit           bucket size
  ARGV[2]  refillRate      tokens added per whole interval
  ARGV[3]  refillInterval  interval in ms
  ARGV[4]  cost            tokens the verification at hand takes (0: a grant or a return alone)
  ARGV[5]  now             TEST ONLY: unix ms instead of the Redis clock; "" in production
  ARGV[6]  holder          who holds the lease: the region; it holds at most one per bucket
  ARGV[7]  leaseId         the new lease's id (an integer the holder chose)
  ARGV[8]  want            tokens the holder asks to lease (0: none)
  ARGV[9]  maxLease        the most one lease may hold (a share of the limit)
  ARGV[10] ttlMs           how long the new lease lives
  ARGV[11] returnId        the holder's previous lease, closed on its Redis; "" for none
  ARGV[12] returnUnused    its tokens left unspent, given back (ignored, and lost, when that lease
                           already expired here: the bucket may have refilled into their room)

  The lease is at most half of what the bucket holds after the verification's own tokens: as the
  bucket nears empty leases shrink to nothing and each verification comes here again, so the last
  tokens are never stranded in a region that does not need them.

  Returns { status, remaining, reset, now, granted, expiresAt }
    status     1 admitted (and the return and grant applied), 0 refused (the return still applied)
    remaining  the tokens the primary holds after this call (not counting any out on lease)
    reset      unix ms at which the bucket next gains a token
    now        the clock reading used
    granted    tokens in the new lease (0: none; the holder already has one, or too few are left)
    expiresAt  unix ms, on this clock, when the new lease ends (0 without one)
]]
--- @include "includes/bucket"

local bucketKey = KEYS[1]
local limit = tonumber(ARGV[1])
local refillRate = tonumber(ARGV[2])
local refillInterval = tonumber(ARGV[3])
local cost = tonumber(ARGV[4])
local now = bucketClock(ARGV[5])
local holderField = 'lease:' .. ARGV[6]
local leaseId = ARGV[7]
local want = tonumber(ARGV[8])
local maxLease = tonumber(ARGV[9])
local ttl = tonumber(ARGV[10])
local returnId = ARGV[11]

local tokens, last, leased, leasesUntil = readBucket(bucketKey, limit, refillRate, refillInterval,
  now)
local changed = false

-- 1. The holder's previous lease, closed on its side: what it did not spend comes back.
local held = redis.call('HGET', bucketKey, holderField)
if held and returnId ~= '' then
  local id, granted = leaseParts(held)
  if id == returnId then
    local unused = math.min(math.max(tonumber(ARGV[12]) or 0, 0), granted)
    leased = leased - granted
    tokens = math.min(tokens + unused, limit - leased)
    redis.call('HDEL', bucketKey, holderField)
    held = nil
    changed = true
  end
end

local function finish(status, granted, expiresAt)
  if changed then
    writeLeasedBucket(bucketKey, tokens, last, leased, leasesUntil, limit, refillRate,
      refillInterval, now)
  end
  return { status, tokens, last + refillInterval, now, granted, expiresAt }
end

-- 2. The verification's own tokens.
if cost > tokens then
  return finish(0, 0, 0)
end
if cost ~= 0 then
  tokens = tokens - cost
  changed = true
end

-- 3. A new lease, when the holder has none.
local granted = 0
if not held and want > 0 then
  granted = math.min(want, maxLease, math.floor(tokens / 2))
end
if granted < 1 then
  return finish(1, 0, 0)
end
local expiresAt = now + ttl
tokens = tokens - granted
leased = leased + granted
if expiresAt > leasesUntil then leasesUntil = expiresAt end
redis.call('HSET', bucketKey, holderField,
  string.format('%s %d %d', leaseId, granted, expiresAt))
changed = true
return finish(1, granted, expiresAt)
