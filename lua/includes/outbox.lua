--[[
  The audit outbox: a write whose keys are not in its workspace's slot (a key's credits, a root
  key's record) appends its audit entry to an outbox stream under its own hash tag, in the very
  script that makes the write; the node then relays it to the workspace's stream
  (relay-audit-2.lua). So the entry exists if and only if the write happened, on a cluster too.

  outboxEntry(arg) decodes a script's outbox argument, JSON
    {"ttl": "<ms>", "fields": ["workspaceId", "ws_…", "token", "…", "rootKeyId", "rk_…", …]}
  and fails on anything else. A script calls it before it writes anything, so a malformed entry
  fails the script with nothing written.
  appendOutbox(outbox, entry) appends the entry and sets the outbox to expire `ttl` ms after its
  last entry: the relay deletes entries as it moves them, and an outbox left empty goes by itself.
]]
local function outboxEntry(arg)
  local ok, entry = pcall(cjson.decode, arg or '')
  if not ok or type(entry) ~= 'table' or type(entry.fields) ~= 'table' or #entry.fields == 0
    or #entry.fields % 2 ~= 0 or not tonumber(entry.ttl) then
    return error('outbox entry: {"ttl", "fields"} expected')
  end
  return entry
end

local function appendOutbox(outbox, entry)
  local id = redis.call('XADD', outbox, '*', unpack(entry.fields))
  redis.call('PEXPIRE', outbox, tostring(entry.ttl))
  return id
end
