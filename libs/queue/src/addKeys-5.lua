--[[
  Adds keys to one shard: the client-go Add (delay 0) and AddAfter (delay > 0) in one atomic step.

  KEYS[1] ready    ZSET key -> enqueue time in µs (+ LOW_PRIORITY_OFFSET for low priority); FIFO by score
  KEYS[2] delayed  ZSET key -> due time
  KEYS[3] leases   ZSET key -> lease deadline (client-go "processing")
  KEYS[4] dirty    HASH key -> priority ('0' normal, '1' low); an add seen while the key runs
  KEYS[5] notify   LIST wake-up marker for idle consumers (at most one element)

  ARGV[1] delay in ms, ARGV[2] priority ('0' or '1'), ARGV[3..] the keys

  Returns the number of keys that became pending (workqueue_adds_total: duplicates are not counted).

  Why it is race-free: a key moves between ready, leases and delayed only inside scripts, and every
  path into ready first checks leases, so a key is never ready while it runs (no two runs at once).
  An add for a running key is recorded in dirty, which finishAndTake turns into one more turn.
]]
-- Scores in ready are microseconds, so FIFO order holds within a millisecond; low priority
-- adds an offset larger than any enqueue time (about 127 years).
local LOW_PRIORITY_OFFSET = 4e15
local time = redis.call('TIME')
local nowUs = tonumber(time[1]) * 1000000 + tonumber(time[2])
local now = math.floor(nowUs / 1000)
local delay = tonumber(ARGV[1])
local priority = ARGV[2]
local pending = 0
local wake = false

if delay <= 0 then
  local score = nowUs
  if priority == '1' then score = nowUs + LOW_PRIORITY_OFFSET end
  for i = 3, #ARGV do
    local key = ARGV[i]
    -- A real event supersedes a pending RequeueAfter, backoff or resync: it is due now.
    redis.call('ZREM', KEYS[2], key)
    if redis.call('ZSCORE', KEYS[3], key) then
      local seen = redis.call('HGET', KEYS[4], key)
      if not seen then
        redis.call('HSET', KEYS[4], key, priority)
        pending = pending + 1
      elseif seen == '1' and priority == '0' then
        redis.call('HSET', KEYS[4], key, '0')
      end
    else
      -- LT keeps the earlier (higher priority, older) score, so a key waits once, in FIFO order.
      pending = pending + redis.call('ZADD', KEYS[1], 'LT', score, key)
      wake = true
    end
  end
else
  local due = now + delay
  for i = 3, #ARGV do
    local key = ARGV[i]
    -- A key already waiting for an immediate turn ignores later delayed adds; LT keeps the
    -- earliest due time among several delayed adds.
    if not redis.call('ZSCORE', KEYS[1], key) then
      redis.call('ZADD', KEYS[2], 'LT', due, key)
    end
  end
  -- Idle consumers sleep until the earliest due time they saw; wake one if that moved earlier.
  local first = redis.call('ZRANGE', KEYS[2], 0, 0, 'WITHSCORES')
  wake = first[2] ~= nil and tonumber(first[2]) == due
end

if wake and redis.call('LLEN', KEYS[5]) == 0 then
  redis.call('RPUSH', KEYS[5], '1')
end
return pending
