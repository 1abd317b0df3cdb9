--[[
  Redis-loss detector: each shard carries an epoch marker written once. A Redis that restarts
  empty has lost it; the first client to notice writes a new one, and every client compares the
  value with the one it remembered.

  KEYS[1] epoch  STRING
  ARGV[1] a fresh random epoch, used only when the marker is missing

  Returns the current epoch.
]]
local epoch = redis.call('GET', KEYS[1])
if epoch then
  return epoch
end
redis.call('SET', KEYS[1], ARGV[1])
return ARGV[1]
