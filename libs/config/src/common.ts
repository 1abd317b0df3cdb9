import { accessSync, constants, readFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { randomUUID } from 'node:crypto';
import { DNS_LABEL, type EnvReader } from './env-reader.js';
import { readRedisConfig, type RedisConfig } from './redis.js';

export const LOG_LEVELS = ['debug', 'info', 'warn', 'error'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

export interface ListenConfig {
  readonly port: number;
  readonly bindAddress: string;
}

export interface QueueConfig {
  /** Prefix of every Redis key of the queue. */
  readonly name: string;
  readonly shards: number;
  /** How long a worker's claim on a key lasts without renewal: how soon a killed worker's key runs elsewhere. */
  readonly lockDurationMs: number;
  /** Per-key failure backoff: base doubling up to max (client-go's 5ms … 1000s). */
  readonly backoffBaseMs: number;
  readonly backoffMaxMs: number;
}

export interface MetricsConfig extends ListenConfig {
  /**
   * HTTPS, and only for callers whose bearer token a TokenReview accepts and whom a
   * SubjectAccessReview allows `get` on the non-resource URL /metrics (METRICS_SECURE).
   */
  readonly secure: boolean;
  /** Directory holding tls.crt and tls.key for the secure listener (METRICS_CERT_DIR). */
  readonly certDir: string | undefined;
}

/** What both the watcher and the worker read, under the same variable names as the chart and docker-compose. */
export interface CommonConfig {
  /** KUBECONFIG as given (may list several files); undefined → in-cluster config. */
  readonly kubeconfig: string | undefined;
  readonly redis: RedisConfig;
  readonly queue: QueueConfig;
  /** Namespaces to watch; empty → all namespaces. */
  readonly watchNamespaces: readonly string[];
  readonly metrics: MetricsConfig;
  readonly health: ListenConfig;
  readonly logLevel: LogLevel;
  /** Time from SIGTERM to exit; keep it below the pod's terminationGracePeriodSeconds. */
  readonly shutdownGracePeriodMs: number;
  /** This process's identity: Lease holder, queue consumer name, log field. */
  readonly podName: string;
  readonly podNamespace: string;
}

/** Where Kubernetes mounts the pod's namespace; controller-runtime reads the same file. */
const SERVICE_ACCOUNT_NAMESPACE_FILE = '/var/run/secrets/kubernetes.io/serviceaccount/namespace';

export interface ConfigSources {
  /** Overridable so tests need not run inside a pod. */
  readonly serviceAccountNamespaceFile?: string;
  readonly hostname?: string;
}

export function readCommonConfig(env: EnvReader, sources: ConfigSources = {}): CommonConfig {
  const metrics = readMetrics(env);
  const health = readListen(env, 'HEALTH', 8081);
  if (metrics.port === health.port) {
    env.conflict(`METRICS_PORT and HEALTH_PORT must differ, both are ${metrics.port}`);
  }
  return {
    kubeconfig: readKubeconfig(env),
    redis: readRedisConfig(env),
    queue: readQueueConfig(env),
    watchNamespaces: env.list(
      'WATCH_NAMESPACES',
      DNS_LABEL,
      'a comma-separated list of namespace names',
    ),
    metrics,
    health,
    logLevel: env.oneOf('LOG_LEVEL', LOG_LEVELS, 'info'),
    // 25s leaves the kubelet's default 30s terminationGracePeriodSeconds room before SIGKILL.
    shutdownGracePeriodMs: env.duration('SHUTDOWN_GRACE_PERIOD', '25s', 0),
    podName: env.string(
      'POD_NAME',
      `${sources.hostname ?? hostname()}_${randomUUID()}`,
      /^[^\s]{1,128}$/,
      'a name of 1 to 128 characters without spaces',
    ),
    podNamespace: env.string(
      'POD_NAMESPACE',
      readServiceAccountNamespace(sources.serviceAccountNamespaceFile) ?? 'default',
      DNS_LABEL,
      'a namespace name',
    ),
  };
}

function readMetrics(env: EnvReader): MetricsConfig {
  const secure = env.oneOf('METRICS_SECURE', ['true', 'false'], 'false') === 'true';
  const certDir = env.raw('METRICS_CERT_DIR');
  if (secure) {
    for (const file of ['tls.crt', 'tls.key']) {
      try {
        accessSync(`${certDir ?? ''}/${file}`, constants.R_OK);
      } catch {
        env.conflict(
          `METRICS_CERT_DIR must name a directory with readable tls.crt and tls.key when METRICS_SECURE=true (got ${certDir === undefined ? 'nothing' : `"${certDir}"`})`,
        );
        break;
      }
    }
  }
  return { ...readListen(env, 'METRICS', 8080), secure, certDir };
}

function readListen(env: EnvReader, prefix: string, port: number): ListenConfig {
  return {
    port: env.port(`${prefix}_PORT`, port),
    bindAddress: env.bindAddress(`${prefix}_BIND_ADDRESS`, '0.0.0.0'),
  };
}

function readQueueConfig(env: EnvReader): QueueConfig {
  const backoffBaseMs = env.duration('BACKOFF_BASE', '5ms');
  const backoffMaxMs = env.duration('BACKOFF_MAX', '1000s');
  if (backoffBaseMs > backoffMaxMs) {
    env.conflict(
      `BACKOFF_BASE (${backoffBaseMs}ms) must not exceed BACKOFF_MAX (${backoffMaxMs}ms)`,
    );
  }
  return {
    // No ':' or braces: the queue library builds hash-tagged Redis keys from the name.
    name: env.string(
      'QUEUE_NAME',
      'backupjob',
      /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/,
      'letters, digits, ".", "_" or "-" (at most 64, no ":" or braces)',
    ),
    shards: env.integer('QUEUE_SHARDS', 16, { min: 1, max: 1024 }),
    lockDurationMs: env.duration('QUEUE_LOCK_DURATION', '30s', 1000),
    backoffBaseMs,
    backoffMaxMs,
  };
}

function readKubeconfig(env: EnvReader): string | undefined {
  const value = env.raw('KUBECONFIG');
  if (value === undefined) return undefined;
  for (const path of value.split(':').filter((p) => p !== '')) {
    try {
      accessSync(path, constants.R_OK);
    } catch {
      return env.fail(
        'KUBECONFIG',
        'a readable kubeconfig file (or a ":"-separated list)',
        path,
        value,
      );
    }
  }
  return value;
}

function readServiceAccountNamespace(file = SERVICE_ACCOUNT_NAMESPACE_FILE): string | undefined {
  try {
    return readFileSync(file, 'utf8').trim() || undefined;
  } catch {
    return undefined;
  }
}
