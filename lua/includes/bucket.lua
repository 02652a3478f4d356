--[[
  A token bucket, for every script that decides one: its state at `now`, and its write after a
  spend.

  The bucket hash holds { tokens, last }. `last` is the refill point in unix ms: refills happen in
  whole intervals counted from it, so no time is lost to rounding. A new bucket starts full.

  A full bucket is normalised to (limit, now): the state at any instant then depends only on the
  admitted requests, so an expired hash (dropped when it would be full) is the same as a fresh one,
  and a refusal or a zero-cost read can skip the write without changing any later answer.
]]
local function readBucket(bucketKey, limit, refillRate, refillInterval, now)
  local tokens, last = limit, now
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
  return tokens, last
end

--[[
  Takes `cost` tokens (the caller has checked there are that many; a negative cost gives tokens
  back, never above the limit) and writes the bucket. Returns the tokens left and the reset: unix
  ms at which the bucket next gains a token.
]]
local function spendBucket(bucketKey, tokens, last, cost, limit, refillRate, refillInterval, now)
  tokens = tokens - cost
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
