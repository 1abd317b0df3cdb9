--[[
  Writes (or deletes) one snapshot unless a newer leader term fenced its shard; raises the fence
  to the writer's term otherwise, so the writes of any older leader are refused from then on.
  KEYS[1] the shard's fence key
  KEYS[2] the snapshot key
  KEYS[3] the shard's hash of converged marks
  ARGV[1] the writer's leader term
  ARGV[2] the snapshot's JSON; empty deletes it, and the key's mark with it
  ARGV[3] the BackupJob key (the mark's field)
  Returns 0 when written, else the newer term that fenced the shard.
]]
local fence = tonumber(redis.call('GET', KEYS[1]))
local term = tonumber(ARGV[1])
if fence ~= nil and fence > term then
  return fence
end
if fence == nil or term > fence then
  redis.call('SET', KEYS[1], ARGV[1])
end
if ARGV[2] == '' then
  redis.call('DEL', KEYS[2])
  redis.call('HDEL', KEYS[3], ARGV[3])
else
  redis.call('SET', KEYS[2], ARGV[2])
end
return 0
