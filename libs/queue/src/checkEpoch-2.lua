--[[
  Redis-loss detector for clients that take no keys (producers) and for the periodic check of
  consumers that are idle: see includes/checkEpoch.lua.

  KEYS[1] epoch  STRING marker
  KEYS[2] hold   STRING, expires when the shard may hand out keys again

  ARGV[1] a fresh random epoch, used only when the marker is missing
  ARGV[2] the epoch this client saw last ('' for none)
  ARGV[3] hold duration in ms (the lock duration)

  Returns the current epoch.
]]
-- @include checkEpoch.lua
return checkEpoch(KEYS[1], KEYS[2], ARGV[1], ARGV[2], tonumber(ARGV[3]))
