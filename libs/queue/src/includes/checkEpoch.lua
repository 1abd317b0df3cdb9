--[[
  Redis-loss check, shared by every script that reads a shard's epoch.

  Each shard carries an epoch marker, written once. A marker that is missing, or differs from the
  one the caller saw last, means Redis lost the shard's data: its leases too, while the runs that
  held them may still be going in their consumers. Those runs end within one lock duration (a
  consumer aborts a run it cannot renew for that long, and its heartbeat finds a wiped lease
  sooner), so the shard hands out no key until then: the hold. A caller that never saw an epoch
  cannot tell a first start from a loss and sets no hold, so a fresh install starts at once.

  Returns the current epoch.
]]
local function checkEpoch(epochKey, holdKey, fresh, seen, holdMs)
  local epoch = redis.call('GET', epochKey)
  if not epoch then
    epoch = fresh
    redis.call('SET', epochKey, epoch)
  end
  if seen ~= '' and seen ~= epoch then
    redis.call('SET', holdKey, '1', 'PX', holdMs, 'NX')
  end
  return epoch
end
