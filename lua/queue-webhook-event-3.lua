--[[
  Queue one webhook event, once: only if its marker is not set yet, and the marker with it, in one
  step, so that of every node noticing the same state of the same key one queues the event.

  KEYS[1]  the marker (names.webhookOnce)
  KEYS[2]  the queue's zset of event ids by due time (names.webhookDue)
  KEYS[3]  the queue's hash of event id → job JSON (names.webhookJobs)
  ARGV[1]  the marker's lifetime, ms
  ARGV[2]  the event id
  ARGV[3]  the job (JSON)

  Returns 1 when queued (due now, on the Redis clock), 0 when the marker was already set.
]]
if not redis.call('SET', KEYS[1], ARGV[2], 'NX', 'PX', tonumber(ARGV[1])) then
  return 0
end
local time = redis.call('TIME')
local now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
redis.call('HSET', KEYS[3], ARGV[2], ARGV[3])
redis.call('ZADD', KEYS[2], now, ARGV[2])
return 1
