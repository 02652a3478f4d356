--[[
  Take an audit outbox out of the registry the sweeper reads (keyward:audit-outboxes), unless a
  write registered it again since the sweeper last looked: each registration adds 1 to its score,
  so a score that moved means a write may be about to append to it.

  KEYS[1]  the registry (zset: outbox name → number of registrations)
  ARGV[1]  the outbox's name
  ARGV[2]  its score when the sweeper found it empty

  Returns 1 when removed, 0 when the score moved or the outbox is no longer registered.
]]
local score = redis.call('ZSCORE', KEYS[1], ARGV[1])
if not score or tonumber(score) ~= tonumber(ARGV[2]) then
  return 0
end
redis.call('ZREM', KEYS[1], ARGV[1])
return 1
