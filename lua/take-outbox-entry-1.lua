--[[
  Take a relayed entry out of its audit outbox, and the outbox with it once it is empty: an
  empty stream would stay (Redis keeps empty streams), and every key that was ever written has
  an outbox. One step, so no entry a write appends meanwhile can be lost with it.

  KEYS[1]  the outbox (stream)
  ARGV[1]  the entry's id

  Returns the number of entries left.
]]
redis.call('XDEL', KEYS[1], ARGV[1])
local left = redis.call('XLEN', KEYS[1])
if left == 0 then
  redis.call('DEL', KEYS[1])
end
return left
