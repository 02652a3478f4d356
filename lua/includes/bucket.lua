--[[
  A token bucket, for every script that decides one: its state at `now`, and its write after a
  spend.

  The bucket hash holds { tokens, last }. `last` is the refill point in unix ms: refills happen in
  whole intervals counted from it, so no time is lost to rounding. A new bucket starts full.

  A full bucket is normalised to (limit, now): the state at any instant then depends only on the
  admitted requests, so an expired hash (dropped when it would be full) is the same as a fresh one,
  and a refusal or a zero-cost read can skip the write without changing any later answer.

  Leases (lua/lease-grant-1.lua; docs/guarantees.md "Leases"). A consistent bucket may have
  tokens out on lease to regions: the hash then also holds
    leased         the tokens granted by the leases still recorded
    leasesUntil    unix ms when the last of them expires
    lease:<holder> "<leaseId> <granted> <expiresAt> <version>", one per holder (a region);
                   a top-up (lua/lease-grant-1.lua) raises the version
  The bucket then refills only up to `limit - leased`, so what the primary holds plus what is out
  on lease never passes the limit. Refill points that pass while the bucket sits at that cap are
  forfeit: when the cap rises (a lease returned or expired) the bucket goes on from where it
  stood, it never catches up on them (that would admit a burst one bucket could not).
]]

-- The cap's state before any lease is settled: the bucket as the cap `limit - leased` allows it.
local function refillBucket(state, limit, refillRate, refillInterval, now)
  local tokens, last = limit, now
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
  return tokens, last
end

local function leaseParts(value)
  local id, granted, expiresAt, version = string.match(value, '^(%S+) (%d+) (%d+) (%d+)$')
  return id, tonumber(granted), tonumber(expiresAt), tonumber(version)
end

--[[
  Drops the leases that expired by `now` (their tokens are spent as far as the primary knows: it
  cannot tell how many the holder used). Returns what is still leased, when it all expires, and
  the expired ones as { expiresAt, granted }, earliest first.
]]
local function settleLeases(bucketKey, now)
  local fields = redis.call('HGETALL', bucketKey)
  local leased, untilAt, expired, names = 0, 0, {}, {}
  for i = 1, #fields, 2 do
    if string.sub(fields[i], 1, 6) == 'lease:' then
      local _, granted, expiresAt = leaseParts(fields[i + 1])
      if expiresAt <= now then
        expired[#expired + 1] = { expiresAt, granted }
        names[#names + 1] = fields[i]
      else
        leased = leased + granted
        if expiresAt > untilAt then untilAt = expiresAt end
      end
    end
  end
  if #names > 0 then redis.call('HDEL', bucketKey, unpack(names)) end
  table.sort(expired, function(a, b) return a[1] < b[1] end)
  return leased, untilAt, expired
end

--[[
  Writes a bucket that has (or had, untilAt this call) leases out. It never expires before its last
  lease does, and then only once refills from that moment would have filled it: the hash dropped
  earlier would read as a full bucket with nothing out on lease.
]]
local function writeLeasedBucket(bucketKey, tokens, last, leased, untilAt, limit, refillRate,
  refillInterval, now)
  if leased > 0 then
    redis.call('HSET', bucketKey, 'tokens', tokens, 'last', last, 'leased', leased,
      'leasesUntil', untilAt)
  else
    redis.call('HSET', bucketKey, 'tokens', tokens, 'last', last)
    redis.call('HDEL', bucketKey, 'leased', 'leasesUntil')
  end
  local from = math.max(now, untilAt)
  local ttl = from - now + math.ceil((limit - tokens) / refillRate) * refillInterval
    + refillInterval
  redis.call('PEXPIRE', bucketKey, string.format('%d', ttl))
end

--[[
  The bucket at `now`: tokens, last, the tokens still out on lease (0 for a bucket that never had
  any; one more field in the HMGET is all such a bucket pays) and when they all expire. Expired
  leases are settled here: the bucket refills under each cap for as long as that cap held, then
  under the next, and is written when any lease was settled.
]]
local function readBucket(bucketKey, limit, refillRate, refillInterval, now)
  local state = redis.call('HMGET', bucketKey, 'tokens', 'last', 'leased')
  if not state[3] then
    local tokens, last = refillBucket(state, limit, refillRate, refillInterval, now)
    return tokens, last, 0, 0
  end
  local leased, untilAt, expired = settleLeases(bucketKey, now)
  local held = leased
  for _, lease in ipairs(expired) do held = held + lease[2] end
  local tokens, last = tonumber(state[1]), tonumber(state[2])
  for _, lease in ipairs(expired) do
    tokens, last = refillBucket({ tokens, last }, limit - held, refillRate, refillInterval, lease[1])
    held = held - lease[2]
  end
  tokens, last = refillBucket({ tokens, last }, limit - held, refillRate, refillInterval, now)
  if #expired > 0 then
    writeLeasedBucket(bucketKey, tokens, last, leased, untilAt, limit, refillRate, refillInterval,
      now)
  end
  return tokens, last, leased, untilAt
end

--[[
  Takes `cost` tokens (the caller has checked there are that many; a negative cost gives tokens
  back, never above the limit, or above `limit - leased` with leases out) and writes the bucket.
  Returns the tokens left and the reset: unix ms at which the bucket next gains a token.
]]
local function spendBucket(bucketKey, tokens, last, cost, limit, refillRate, refillInterval, now,
  leased, untilAt)
  tokens = tokens - cost
  if leased and leased > 0 then
    if tokens > limit - leased then tokens = limit - leased end
    writeLeasedBucket(bucketKey, tokens, last, leased, untilAt, limit, refillRate, refillInterval,
      now)
    return tokens, last + refillInterval
  end
  if tokens >= limit then
    -- A refund that fills the bucket: a full bucket and no hash are the same state.
    redis.call('DEL', bucketKey)
    return limit, now + refillInterval
  end
  redis.call('HSET', bucketKey, 'tokens', tokens, 'last', last)
  -- Expire exactly when the bucket would be full again: from then on it equals a fresh bucket.
  local intervalsToFull = math.ceil((limit - tokens) / refillRate)
  local ttl = last + intervalsToFull * refillInterval - now
  if ttl < 1 then ttl = 1 end
  -- %d: from 1e17 on, Lua would print the number as "1e+17", which PEXPIRE refuses.
  redis.call('PEXPIRE', bucketKey, string.format('%d', ttl))
  return tokens, last + refillInterval
end

-- The clock every bucket script uses: ARGV's test override when given, else the Redis clock.
local function bucketClock(override)
  if override ~= nil and override ~= '' then
    return tonumber(override)
  end
  local t = redis.call('TIME')
  return tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
end
