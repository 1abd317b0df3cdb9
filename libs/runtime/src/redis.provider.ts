import { Redis } from 'ioredis';
import type { Provider } from '@nestjs/common';
import { redisOptions, type CommonConfig } from '#config';
import { redisPingCheck, type HealthRegistry } from './health.js';
import type { Logger } from '#observability';
import type { ShutdownCoordinator } from './shutdown.js';
import { CONFIG, HEALTH, LOGGER, SHUTDOWN, REDIS } from './tokens.js';

/** Reconnects fast enough that readiness recovers within a probe period of Redis coming back. */
const reconnectDelay = (attempt: number) => Math.min(100 * 2 ** Math.min(attempt, 5), 2000);

/**
 * The process's shared ioredis connection. Start-up does not wait for Redis: the process comes
 * up, reports not ready and keeps reconnecting, because a Redis outage delays work, it must not
 * crash-loop the pods.
 */
export const redisProvider: Provider = {
  provide: REDIS,
  inject: [CONFIG, LOGGER, HEALTH, SHUTDOWN],
  useFactory: (
    config: CommonConfig,
    logger: Logger,
    health: HealthRegistry,
    shutdown: ShutdownCoordinator,
  ): Redis => {
    const log = logger.child({ component: 'redis', address: config.redis.address });
    const redis = new Redis(
      redisOptions(config.redis, {
        connectionName: config.podName,
        retryStrategy: reconnectDelay,
      }),
    );
    logConnectionChanges(redis, log);
    health.register(redisPingCheck(redis));
    shutdown.onShutdown('close', 'redis', () => closeRedis(redis));
    return redis;
  },
};

function logConnectionChanges(redis: Redis, log: Logger): void {
  let lastError: string | undefined;
  redis.on('ready', () => {
    lastError = undefined;
    log.info('redis connected');
  });
  // Without a listener ioredis would crash the process; one line per distinct failure, not per retry.
  redis.on('error', (err: Error) => {
    if (err.message === lastError) return;
    lastError = err.message;
    log.warn('redis connection failed; retrying', { err });
  });
}

async function closeRedis(redis: Redis): Promise<void> {
  if (redis.status !== 'ready') {
    redis.disconnect();
    return;
  }
  await redis.quit().catch(() => redis.disconnect());
}
