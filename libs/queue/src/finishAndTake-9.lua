--[[
  Ends one run (client-go Done + Forget/AddRateLimited/AddAfter) and hands out the next keys
  (client-go Get), in one round trip.

  KEYS[1] ready    ZSET key -> enqueue time in µs (+ LOW_PRIORITY_OFFSET for low priority)
  KEYS[2] delayed  ZSET key -> due time
  KEYS[3] leases   ZSET key -> lease deadline
  KEYS[4] owner    HASH key -> fencing token of the current run
  KEYS[5] dirty    HASH key -> priority of an add seen while the key ran
  KEYS[6] fail     HASH key -> consecutive failures (client-go NumRequeues)
  KEYS[7] notify   LIST wake-up marker (at most one element)
  KEYS[8] epoch    STRING Redis-loss marker, KEYS[9] hold: see includes/checkEpoch.lua

  ARGV[1] key that finished ('' when only taking)
  ARGV[2] its token
  ARGV[3] outcome: ok | after | error | terminal | release
  ARGV[4] RequeueAfter in ms (outcome after)
  ARGV[5] backoff base ms, ARGV[6] backoff max ms
  ARGV[7] how many keys to take, ARGV[8] lease ms
  ARGV[9] token prefix; the i-th taken key gets token ARGV[9] .. (ARGV[10] + i)
  ARGV[11] longest idle sleep in ms to suggest
  ARGV[12] a fresh random epoch, ARGV[13] the epoch this consumer saw last ('' for none)

  Returns { finished, now, sleepMs, promoted, epoch, key1, score1, failures1, key2, ... }
    finished: 1 done, 0 nothing to finish, -1 the token no longer owns the key (fenced)
    sleepMs:  when nothing was taken, how long until a delayed key, a lease or the hold falls due
    promoted: delayed keys that became pending (they count as adds)
    epoch:    the shard's current epoch; checked on every call, so the first consumer step after
              Redis lost the shard holds it before any key can be taken twice

  Why it is race-free: the key leaves leases and, if dirty, enters ready in the same step, so an
  add that raced with the run has either marked it dirty (one more turn) or will find it idle.
  Taking moves a key from ready to leases atomically, so no second consumer can take it.
]]
-- @include checkEpoch.lua

-- Scores in ready are microseconds, so FIFO order holds within a millisecond; low priority
-- adds an offset larger than any enqueue time (about 127 years).
local LOW_PRIORITY_OFFSET = 4e15
local ready, delayed, leases, owner, dirty, fail, notify =
  KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5], KEYS[6], KEYS[7]
local time = redis.call('TIME')
local nowUs = tonumber(time[1]) * 1000000 + tonumber(time[2])
local now = math.floor(nowUs / 1000)

local function makeReady(key, priority)
  local score = nowUs
  if priority == '1' then score = nowUs + LOW_PRIORITY_OFFSET end
  redis.call('ZREM', delayed, key)
  redis.call('ZADD', ready, 'LT', score, key)
end

local function finish(key, token, outcome)
  if redis.call('HGET', owner, key) ~= token then
    return -1
  end
  redis.call('ZREM', leases, key)
  redis.call('HDEL', owner, key)
  local due = nil
  if outcome == 'error' then
    local failures = redis.call('HINCRBY', fail, key, 1)
    local base, max = tonumber(ARGV[5]), tonumber(ARGV[6])
    due = now + math.min(base * 2 ^ (failures - 1), max)
  elseif outcome ~= 'release' then
    redis.call('HDEL', fail, key)
    if outcome == 'after' then
      due = now + tonumber(ARGV[4])
    end
  end
  local seen = redis.call('HGET', dirty, key)
  if seen then
    -- An event during the run beats RequeueAfter and backoff, as client-go's Done re-adds at once.
    redis.call('HDEL', dirty, key)
    makeReady(key, seen)
  elseif outcome == 'release' then
    makeReady(key, '0')
  elseif due then
    redis.call('ZADD', delayed, 'LT', due, key)
    -- Idle consumers sleep until the earliest due time they saw; a shorter backoff must wake one.
    local first = redis.call('ZRANGE', delayed, 0, 0)
    if first[1] == key and redis.call('LLEN', notify) == 0 then
      redis.call('RPUSH', notify, '1')
    end
  end
  return 1
end

-- A lease that ran out belongs to a consumer that died or stalled: the key runs again.
local function recoverExpiredLeases()
  local expired = redis.call('ZRANGEBYSCORE', leases, '-inf', now, 'LIMIT', 0, 100)
  for _, key in ipairs(expired) do
    redis.call('ZREM', leases, key)
    redis.call('HDEL', owner, key)
    redis.call('HDEL', dirty, key)
    makeReady(key, '0')
  end
end

local function promoteDueKeys()
  local promoted = 0
  local due = redis.call('ZRANGEBYSCORE', delayed, '-inf', now, 'LIMIT', 0, 1000)
  for _, key in ipairs(due) do
    redis.call('ZREM', delayed, key)
    if redis.call('ZSCORE', leases, key) then
      if redis.call('HSETNX', dirty, key, '0') == 1 then
        promoted = promoted + 1
      else
        redis.call('HSET', dirty, key, '0')
      end
    else
      promoted = promoted + redis.call('ZADD', ready, 'LT', nowUs, key)
    end
  end
  return promoted
end

local function sleepHint()
  local sleep = tonumber(ARGV[11])
  local firstDue = redis.call('ZRANGE', delayed, 0, 0, 'WITHSCORES')
  if firstDue[2] then sleep = math.min(sleep, tonumber(firstDue[2]) - now) end
  local firstLease = redis.call('ZRANGE', leases, 0, 0, 'WITHSCORES')
  if firstLease[2] then sleep = math.min(sleep, tonumber(firstLease[2]) - now) end
  return math.max(sleep, 0)
end

local epoch = checkEpoch(KEYS[8], KEYS[9], ARGV[12], ARGV[13], tonumber(ARGV[8]))
local held = redis.call('PTTL', KEYS[9])

local finished = 0
if ARGV[1] ~= '' then
  finished = finish(ARGV[1], ARGV[2], ARGV[3])
end

local result = { finished, now, 0, 0, epoch }
local want = tonumber(ARGV[7])
if held > 0 then
  -- Waking others would only make them find the hold too: they sleep until it ends.
  result[3] = math.min(held, tonumber(ARGV[11]))
  return result
end
if want > 0 then
  recoverExpiredLeases()
  result[4] = promoteDueKeys()
  local popped = redis.call('ZPOPMIN', ready, want)
  local deadline = now + tonumber(ARGV[8])
  local seq = tonumber(ARGV[10])
  for i = 1, #popped, 2 do
    local key = popped[i]
    redis.call('ZADD', leases, deadline, key)
    redis.call('HSET', owner, key, ARGV[9] .. (seq + (i - 1) / 2))
    result[#result + 1] = key
    result[#result + 1] = popped[i + 1]
    result[#result + 1] = redis.call('HGET', fail, key) or 0
  end
  if #popped == 0 then
    result[3] = sleepHint()
  end
end
-- Keys are left for others (or this consumer had fewer free slots): wake the next idle consumer.
if redis.call('ZCARD', ready) > 0 and redis.call('LLEN', notify) == 0 then
  redis.call('RPUSH', notify, '1')
end
return result
