--[[
  Delete a string only if it still holds a value: an index entry is taken back by the write that
  made it, never from under another.

  KEYS[1]  the string
  ARGV[1]  the value it must hold

  Returns 1 when deleted, 0 otherwise.
]]
if redis.call('GET', KEYS[1]) == ARGV[1] then
  redis.call('DEL', KEYS[1])
  return 1
end
return 0
