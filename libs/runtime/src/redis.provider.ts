import type { Provider } from '@nestjs/common';
import { Cluster } from 'ioredis';
import { redisConnection, type CommonConfig } from '#config';
import { createRedisClient, type RedisClient } from '#queue';
import { redisPingCheck, type HealthRegistry } from './health.js';
import type { Logger } from '#observability';
import type { ShutdownCoordinator } from './shutdown.js';
import { CONFIG, HEALTH, LOGGER, SHUTDOWN, REDIS } from './tokens.js';

/**
 * The process's shared Redis client (the snapshots), in the configured mode: one server, a
 * Sentinel-managed primary or a Cluster. Start-up does not wait for Redis: the process comes up,
 * reports not ready and keeps reconnecting, because a Redis outage or failover delays work, it
 * must not crash-loop the pods.
 */
export const redisProvider: Provider = {
  provide: REDIS,
  inject: [CONFIG, LOGGER, HEALTH, SHUTDOWN],
  useFactory: (
    config: CommonConfig,
    logger: Logger,
    health: HealthRegistry,
    shutdown: ShutdownCoordinator,
  ): RedisClient => {
    const log = logger.child({
      component: 'redis',
      mode: config.redis.mode,
      address: config.redis.address,
    });
    const redis = createRedisClient(redisConnection(config.redis), {
      connectionName: config.podName,
    });
    logConnectionChanges(redis, log);
    health.register(redisPingCheck(redis));
    shutdown.onShutdown('close', 'redis', () => closeRedis(redis));
    return redis;
  },
};

function logConnectionChanges(redis: RedisClient, log: Logger): void {
  let lastError: string | undefined;
  redis.on('ready', () => {
    lastError = undefined;
    log.info('redis connected');
  });
  // Without a listener ioredis would crash the process; one line per distinct failure, not per retry.
  const failed = (err: Error) => {
    if (err.message === lastError) return;
    lastError = err.message;
    log.warn('redis connection failed; retrying', { err });
  };
  redis.on('error', failed);
  if (redis instanceof Cluster) {
    redis.on('node error', failed);
    redis.on('+node', (node: { options: { host?: string; port?: number } }) =>
      log.debug('redis cluster node added', { node: `${node.options.host}:${node.options.port}` }),
    );
    redis.on('-node', (node: { options: { host?: string; port?: number } }) =>
      log.info('redis cluster node dropped', {
        node: `${node.options.host}:${node.options.port}`,
      }),
    );
  }
}

async function closeRedis(redis: RedisClient): Promise<void> {
  if (redis.status !== 'ready') {
    redis.disconnect();
    return;
  }
  await redis.quit().catch(() => redis.disconnect());
}
