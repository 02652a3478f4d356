--[[
  A region's lease on a consistent bucket, on the primary (docs/guarantees.md "Leases"): in one
  atomic step, take back what the region returns of its previous lease (or top up the lease it is
  still spending), spend the verification's own tokens, and move a slice of what is left into a
  lease that the region spends on its node-local Redis (lua/lease-spend-1.lua) without asking.

  KEYS[1]  the bucket hash (includes/bucket.lua; leases are fields of it)
  ARGV[1]  limit           bucket size
  ARGV[2]  refillRate      tokens added per whole interval
  ARGV[3]  refillInterval  interval in ms
  ARGV[4]  cost            tokens the verification at hand takes (0: a grant, top-up or return
                           alone)
  ARGV[5]  now             TEST ONLY: unix ms instead of the Redis clock; "" in production
  ARGV[6]  holder          who holds the lease: the region; it holds at most one per bucket
  ARGV[7]  leaseId         a new lease's id (an integer the holder chose)
  ARGV[8]  want            tokens the holder asks for (0: none)
  ARGV[9]  maxLease        the most one lease may hold (a share of the limit)
  ARGV[10] ttlMs           how long a new or topped-up lease lives from now
  ARGV[11] heldId          the holder's lease this call is about; "" for none
  ARGV[12] unused          its tokens unspent, as the region read them at version ARGV[14]
  ARGV[13] topUp           "1": the lease stays and is topped up (what was spent is released,
                           up to `want` more added, its life starts again); otherwise it was
                           closed on the region's side and its unspent tokens come back
  ARGV[14] version         the lease's version the region read `unused` at (top-up only): a
                           top-up of another version (one of another node got there first) is
                           refused, so the region's tokens never pass what the primary counts

  A return or top-up of a lease that already expired here is ignored, and its tokens lost: the
  bucket may have refilled into their room.

  A lease or top-up is at most half of what the bucket holds after the verification's own tokens:
  as the bucket nears empty leases shrink to nothing and each verification comes here again, so
  the last tokens are never stranded in a region that does not need them.

  Returns { status, remaining, reset, now, granted, expiresAt, version }
    status     1 admitted (the return, grant or top-up applied), 0 refused (a return still
               applied), 2 top-up refused: no such lease, or another version
    remaining  the tokens the primary holds after this call (not counting any out on lease)
    reset      unix ms at which the bucket next gains a token
    now        the clock reading used
    granted    tokens moved into the lease by this call (0: none; the holder already has one, or
               too few are left)
    expiresAt  unix ms, on this clock, when the new or topped-up lease ends (0 without one)
    version    the lease's version after this call
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
local heldId = ARGV[11]
local topUp = ARGV[13] == '1'

local tokens, last, leased, leasesUntil = readBucket(bucketKey, limit, refillRate, refillInterval,
  now)
local changed = false

local function finish(status, granted, expiresAt, version)
  if changed then
    writeLeasedBucket(bucketKey, tokens, last, leased, leasesUntil, limit, refillRate,
      refillInterval, now)
  end
  return { status, tokens, last + refillInterval, now, granted, expiresAt, version }
end

-- What the primary knows of the holder's lease: only a live one (readBucket settled the rest).
local held = redis.call('HGET', bucketKey, holderField)
local id, heldGranted, heldExpires, heldVersion
if held then id, heldGranted, heldExpires, heldVersion = leaseParts(held) end
local unused = 0
if held and id == heldId then
  unused = math.min(math.max(tonumber(ARGV[12]) or 0, 0), heldGranted)
end

-- 1. A top-up: the spent part is released, up to `want` more added, the life starts again.
if topUp then
  if not held or id ~= heldId or tostring(heldVersion) ~= ARGV[14] then
    return finish(2, 0, 0, heldVersion or 0)
  end
  local extra = math.max(0, math.min(want, maxLease - unused, math.floor(tokens / 2)))
  tokens = tokens - extra
  leased = leased - heldGranted + unused + extra
  local expiresAt = now + ttl
  if expiresAt > leasesUntil then leasesUntil = expiresAt end
  redis.call('HSET', bucketKey, holderField,
    string.format('%s %d %d %d', id, unused + extra, expiresAt, heldVersion + 1))
  changed = true
  return finish(1, extra, expiresAt, heldVersion + 1)
end

-- 2. The holder's previous lease, closed on its side: what it did not spend comes back.
if held and id == heldId then
  leased = leased - heldGranted
  tokens = math.min(tokens + unused, limit - leased)
  redis.call('HDEL', bucketKey, holderField)
  held = nil
  changed = true
end

-- 3. The verification's own tokens.
if cost > tokens then
  return finish(0, 0, 0, 0)
end
if cost ~= 0 then
  tokens = tokens - cost
  changed = true
end

-- 4. A new lease, when the holder has none.
local granted = 0
if not held and want > 0 then
  granted = math.min(want, maxLease, math.floor(tokens / 2))
end
if granted < 1 then
  return finish(1, 0, 0, 0)
end
local expiresAt = now + ttl
tokens = tokens - granted
leased = leased + granted
if expiresAt > leasesUntil then leasesUntil = expiresAt end
redis.call('HSET', bucketKey, holderField,
  string.format('%s %d %d %d', leaseId, granted, expiresAt, 1))
changed = true
return finish(1, granted, expiresAt, 1)
