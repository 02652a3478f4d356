--[[
  Update a live key record if nobody changed it since the caller read it (compare-and-set on
  `version`), tell every node, and append the write's audit entry to the key's outbox. An owner
  index the key leaves or joins is in another slot: the caller moves it after this.

  KEYS[1]  the key record (hash)
  KEYS[2]  the key's audit outbox (stream)
  ARGV[1]  the version the caller read
  ARGV[2]  invalidation channel
  ARGV[3]  invalidation message
  ARGV[4]  the audit entry (lua/includes/outbox.lua); "" for none (a reroll's old key: the
           entry goes with the new key's commit)
  ARGV[5]  n: the number of fields to set
  ARGV[6 … 5+2n]  field, value pairs to set
  ARGV[6+2n …]    fields to delete

  Returns 1 when the record is updated, -1 when there is no live key, -2 when its version moved
  on (read again).
]]
--- @include "includes/liveKey"
--- @include "includes/outbox"

local entry = ARGV[4] ~= '' and outboxEntry(ARGV[4]) or nil
return changeLiveKey(KEYS[1], ARGV[1], function()
  local n = tonumber(ARGV[5])
  local set = { 'version', tonumber(ARGV[1]) + 1 }
  for i = 6, 5 + 2 * n do
    set[#set + 1] = ARGV[i]
  end
  redis.call('HSET', KEYS[1], unpack(set))
  if #ARGV >= 6 + 2 * n then
    redis.call('HDEL', KEYS[1], unpack(ARGV, 6 + 2 * n))
  end
  redis.call('PUBLISH', ARGV[2], ARGV[3])
  if entry then
    appendOutbox(KEYS[2], entry)
  end
end)
