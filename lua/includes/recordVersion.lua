--[[
  Compare-and-set on a record's `version`, for scripts that change a record the caller read
  first: the change happens only if nobody changed the record in between.

  changeAtVersion runs `change` only when the record exists at `version`, and returns the
  script's answer:
     1  changed
    -1  the record does not exist
    -2  its version moved on (the caller reads it again and retries)
]]
local function changeAtVersion(recordKey, version, change)
  if redis.call('EXISTS', recordKey) == 0 then
    return -1
  end
  if redis.call('HGET', recordKey, 'version') ~= version then
    return -2
  end
  change()
  return 1
end
