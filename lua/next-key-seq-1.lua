--[[
  Take the next sequence numbers of an API's keys, which order its listing.

  KEYS[1]  the API record (hash); must exist, be of the workspace and not carry `deletedAt`
  ARGV[1]  how many numbers to take
  ARGV[2]  the workspace the API must be of (API ids are not tagged by workspace any more)

  Returns the last number taken (the first is that minus ARGV[1], plus 1), or -1 when the API
  does not exist, is another workspace's or is being deleted.
]]
if redis.call('EXISTS', KEYS[1]) == 0 or redis.call('HEXISTS', KEYS[1], 'deletedAt') == 1
  or redis.call('HGET', KEYS[1], 'workspaceId') ~= ARGV[2] then
  return -1
end
return redis.call('HINCRBY', KEYS[1], 'keySeq', tonumber(ARGV[1]))
