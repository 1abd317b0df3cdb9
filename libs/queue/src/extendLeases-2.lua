--[[
  Heartbeat: extends the leases a consumer still owns.

  KEYS[1] leases  ZSET key -> lease deadline
  KEYS[2] owner   HASH key -> fencing token of the run that holds the lease

  ARGV[1] lease duration in ms, then pairs ARGV[2k] key, ARGV[2k+1] token

  Returns one integer per pair: 1 extended, 0 lost (the lease expired and the key was handed to
  another run, or Redis lost its data). XX never re-creates a lease that recovery removed.
]]
local time = redis.call('TIME')
local now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
local deadline = now + tonumber(ARGV[1])
local result = {}
for i = 2, #ARGV, 2 do
  if redis.call('HGET', KEYS[2], ARGV[i]) == ARGV[i + 1] then
    redis.call('ZADD', KEYS[1], 'XX', deadline, ARGV[i])
    result[#result + 1] = 1
  else
    result[#result + 1] = 0
  end
end
return result
