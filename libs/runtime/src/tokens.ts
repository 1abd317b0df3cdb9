/**
 * Injection tokens of what every operator process shares. Inject with `@Inject(LOGGER)` etc.;
 * the types are Logger, OperatorMetrics, HealthRegistry, ShutdownCoordinator, RedisClient (an
 * ioredis Redis or Cluster, as the REDIS_* variables choose), KubeConnection, and the app's
 * WatcherConfig or WorkerConfig.
 */
export const CONFIG = Symbol('operator.config');
export const LOGGER = Symbol('operator.logger');
export const METRICS = Symbol('operator.metrics');
export const HEALTH = Symbol('operator.health');
export const SHUTDOWN = Symbol('operator.shutdown');
export const REDIS = Symbol('operator.redis');
export const KUBE = Symbol('operator.kube');
