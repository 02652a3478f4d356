--[[
  Claim the webhook deliveries that are due: each is pushed back by the lease, so no other node
  takes it while this one delivers, and a node that dies with it leaves it due again once the
  lease runs out (at least once: a receiver drops repeats by the event's id).

  KEYS[1]  the queue's zset of event ids by due time (names.webhookDue)
  KEYS[2]  the queue's hash of event id → job JSON (names.webhookJobs)
  ARGV[1]  the lease, ms
  ARGV[2]  the most to claim

  Returns a JSON array of [eventId, job] pairs ('[]' when none is due). An id without its job
  (acknowledged by another node meanwhile) is dropped from the zset.
]]
local time = redis.call('TIME')
local now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
local due = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', now, 'LIMIT', 0, tonumber(ARGV[2]))
local claimed = {}
for _, id in ipairs(due) do
  local job = redis.call('HGET', KEYS[2], id)
  if job then
    redis.call('ZADD', KEYS[1], now + tonumber(ARGV[1]), id)
    claimed[#claimed + 1] = { id, job }
  else
    redis.call('ZREM', KEYS[1], id)
  end
end
if #claimed == 0 then
  return '[]'
end
return cjson.encode(claimed)
