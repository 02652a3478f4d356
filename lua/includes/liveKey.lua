--[[
  A key record as the key scripts see it: live once committed, invisible while `pending` (a
  creation under way, docs/redis.md "Writes across slots") and gone once it carries `deletedAt`
  (a tombstone that fences a late migration or repair from bringing the key back).

  changeLiveKey runs `change` only when the record is live at `version`, and returns the
  script's answer:
     1  changed
    -1  there is no live record
    -2  its version moved on (the caller reads it again and retries)
]]
local function isLiveKey(record)
  return redis.call('EXISTS', record) == 1 and redis.call('HEXISTS', record, 'pending') == 0
    and redis.call('HEXISTS', record, 'deletedAt') == 0
end

local function changeLiveKey(record, version, change)
  if not isLiveKey(record) then
    return -1
  end
  if redis.call('HGET', record, 'version') ~= version then
    return -2
  end
  change()
  return 1
end
