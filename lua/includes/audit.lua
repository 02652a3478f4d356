--[[
  The audit log: a management write appends one entry to its workspace's stream in the very script
  that makes the write, so the entry exists if and only if the write happened.

  auditEntry(arg) decodes a script's audit argument, JSON
    {"max": "<cap>", "fields": ["rootKeyId", "rk_…", "operation", "keys.createKey", …]}
  and fails on anything else. A script calls it before it writes anything, so a malformed entry
  fails the script with nothing written.
  appendAudit(stream, entry) appends the entry, trimming the stream to its last `max` entries
  (exactly: XADD … MAXLEN max); the entry's id carries the time on the Redis clock.
]]
local function auditEntry(arg)
  local ok, entry = pcall(cjson.decode, arg or '')
  if not ok or type(entry) ~= 'table' or type(entry.fields) ~= 'table' or #entry.fields == 0
    or #entry.fields % 2 ~= 0 or not tonumber(entry.max) then
    return error('audit entry: {"max", "fields"} expected')
  end
  return entry
end

local function appendAudit(stream, entry)
  redis.call('XADD', stream, 'MAXLEN', tostring(entry.max), '*', unpack(entry.fields))
end
