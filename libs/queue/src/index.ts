// The key queue between the watcher and the workers: client-go's workqueue (Add, AddAfter,
// AddRateLimited, Forget; never two runs of a key at once) kept across processes on sharded
// BullMQ queues in Redis, with leader-term fencing so a deposed watcher's late adds are refused.
export { createRedisClient, type RedisClient } from './connection.js';
export { FencedError, isFencedError } from './fence.js';
export { LuaScript } from './scripts.js';
export { QueueConsumer, type Handler, type RunContext } from './consumer.js';
export { WorkQueueMetrics } from './metrics.js';
export {
  queueDefaults,
  resolveQueueOptions,
  type QueueOptions,
  type RedisConnectionConfig,
} from './options.js';
export { NotReplicatedError } from './queue-base.js';
export {
  isTerminalError,
  // What a handler's signal aborts with (docs/queue.md), so a handler can tell the two apart.
  /** @public */
  LeaseLostError,
  /** @public */
  ShutdownError,
  TerminalError,
  type HandlerResult,
} from './result.js';
export { shardKeys, shardLocation, shardOf } from './shard.js';
export type { ShardDepth } from './shard-queue.js';
export { WorkQueue } from './work-queue.js';
