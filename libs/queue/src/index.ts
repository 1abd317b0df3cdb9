export { createRedisClient, type RedisClient } from './connection.js';
export { FencedError, isFencedError, termCurrent } from './fence.js';
export { LuaScript } from './scripts.js';
export {
  QueueConsumer,
  type ConsumerEvents,
  type Handler,
  type RunContext,
  type ShutdownOptions,
  type StartOptions,
} from './consumer.js';
export { WorkQueueMetrics } from './metrics.js';
export {
  queueDefaults,
  resolveQueueOptions,
  type BackoffOptions,
  type QueueOptions,
  type RedisConnectionConfig,
} from './options.js';
export { NotReplicatedError, type QueueEvents } from './queue-base.js';
export {
  isTerminalError,
  LeaseLostError,
  ShutdownError,
  TerminalError,
  type HandlerResult,
} from './result.js';
export { shardKeys, shardLocation, shardOf, type ShardKeys } from './shard.js';
export type { ShardDepth } from './shard-queue.js';
export { WorkQueue, type AddOptions, type Priority } from './work-queue.js';
