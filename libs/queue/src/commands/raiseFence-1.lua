--[[
  Raises a shard's fence to a leader term, never lowers it.
  KEYS[1] the shard's fence key
  ARGV[1] the term
  Returns the fence after the call: higher than ARGV[1] when a newer term already leads.
]]
local fence = tonumber(redis.call('GET', KEYS[1]))
local term = tonumber(ARGV[1])
if fence == nil or term > fence then
  redis.call('SET', KEYS[1], ARGV[1])
  return term
end
return fence
