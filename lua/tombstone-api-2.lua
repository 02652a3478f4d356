--[[
  Mark an API deleted: the point of no return of its deletion. From this step on its keys no
  longer verify (every node hears of it) and no key can be added to it (next-key-seq-1.lua
  refuses); the caller then takes it out of its workspace's index (another slot), purges its keys
  in batches and finally removes the record. The audit entry goes to the API's outbox in this
  step, so it exists if and only if the deletion does. A resumed deletion (the record already
  marked) writes nothing and is answered 0, so that its caller finishes the rest.

  KEYS[1]  the API record (hash)
  KEYS[2]  its audit outbox (stream)
  ARGV[1]  the workspace the API must be of (ids are not tagged by workspace any more)
  ARGV[2]  deletion time, unix ms
  ARGV[3]  invalidation channel
  ARGV[4]  invalidation message
  ARGV[5]  the audit entry (lua/includes/outbox.lua)

  Returns 1 when the API is now marked deleted, 0 when it already was, -1 when there is no API
  of the workspace (none, another workspace's, or one already removed).
]]
--- @include "includes/outbox"

local entry = outboxEntry(ARGV[5])
if redis.call('EXISTS', KEYS[1]) == 0 or redis.call('HEXISTS', KEYS[1], 'removedAt') == 1
  or redis.call('HGET', KEYS[1], 'workspaceId') ~= ARGV[1] then
  return -1
end
if redis.call('HSETNX', KEYS[1], 'deletedAt', ARGV[2]) == 0 then
  return 0
end
redis.call('PUBLISH', ARGV[3], ARGV[4])
appendOutbox(KEYS[2], entry)
return 1
