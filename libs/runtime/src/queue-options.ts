import type { Registry } from 'prom-client';
import type { QueueOptions } from '#queue';
import { type CommonConfig, redisConnection } from '#config';

/** The queue both apps open: the watcher produces into it, workers consume from it. */
export function queueOptions(config: CommonConfig, registry?: Registry): QueueOptions {
  return {
    name: config.queue.name,
    controller: 'backupjob',
    connection: redisConnection(config.redis),
    shards: config.queue.shards,
    lockDurationMs: config.queue.lockDurationMs,
    backoff: { baseMs: config.queue.backoffBaseMs, maxMs: config.queue.backoffMaxMs },
    registry,
  };
}
