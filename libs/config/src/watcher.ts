import { DNS_LABEL, DNS_SUBDOMAIN, EnvReader, type Env } from './env-reader.js';
import {
  readCommonConfig,
  type CommonConfig,
  type ConfigSources,
  type ListenConfig,
} from './common.js';

export interface LeaderElectionConfig {
  readonly namespace: string;
  /** Name of the coordination.k8s.io/v1 Lease. */
  readonly id: string;
  /** The holderIdentity written into the Lease (POD_NAME). */
  readonly identity: string;
  readonly leaseDurationMs: number;
  readonly renewDeadlineMs: number;
  readonly retryPeriodMs: number;
}

export interface WatcherConfig extends CommonConfig {
  readonly app: 'watcher';
  readonly leaderElection: LeaderElectionConfig;
  /** How often every key is enqueued again although nothing changed (controller-runtime SyncPeriod). */
  readonly resyncPeriodMs: number;
  /** The read-only queue dashboard (Bull Board); undefined unless QUEUE_DASHBOARD_PORT is set. */
  readonly queueDashboard: ListenConfig | undefined;
}

/** Parses and validates the watcher's environment; throws ConfigError naming every bad variable. */
export function loadWatcherConfig(env: Env, sources: ConfigSources = {}): WatcherConfig {
  const reader = new EnvReader(env);
  const common = readCommonConfig(reader, sources);
  const config: WatcherConfig = {
    ...common,
    app: 'watcher',
    leaderElection: readLeaderElection(reader, common),
    resyncPeriodMs: reader.duration('RESYNC_PERIOD', '10h', 1000),
    queueDashboard: readQueueDashboard(reader, common),
  };
  reader.finish();
  return config;
}

function readLeaderElection(env: EnvReader, common: CommonConfig): LeaderElectionConfig {
  const leaseDurationMs = env.duration('LEADER_ELECTION_LEASE_DURATION', '15s', 1000);
  const renewDeadlineMs = env.duration('LEADER_ELECTION_RENEW_DEADLINE', '10s', 1000);
  const retryPeriodMs = env.duration('LEADER_ELECTION_RETRY_PERIOD', '2s', 100);
  // client-go's own validation: a leader must give up before its lease can expire, and renew
  // retries (jittered by 1.2) must fit in the deadline.
  if (leaseDurationMs <= renewDeadlineMs) {
    env.conflict(
      `LEADER_ELECTION_LEASE_DURATION (${leaseDurationMs}ms) must be greater than LEADER_ELECTION_RENEW_DEADLINE (${renewDeadlineMs}ms)`,
    );
  }
  if (renewDeadlineMs <= 1.2 * retryPeriodMs) {
    env.conflict(
      `LEADER_ELECTION_RENEW_DEADLINE (${renewDeadlineMs}ms) must be greater than 1.2 × LEADER_ELECTION_RETRY_PERIOD (${retryPeriodMs}ms)`,
    );
  }
  return {
    namespace: env.string(
      'LEADER_ELECTION_NAMESPACE',
      common.podNamespace,
      DNS_LABEL,
      'a namespace name',
    ),
    id: env.string(
      'LEADER_ELECTION_ID',
      'backupjob-operator-watcher',
      DNS_SUBDOMAIN,
      'a Lease name (lower-case DNS subdomain)',
    ),
    identity: common.podName,
    leaseDurationMs,
    renewDeadlineMs,
    retryPeriodMs,
  };
}

/** Off unless a port is given; never on the metrics or health port, which stay free of it. */
function readQueueDashboard(env: EnvReader, common: CommonConfig): ListenConfig | undefined {
  if (env.raw('QUEUE_DASHBOARD_PORT') === undefined) return undefined;
  const port = env.port('QUEUE_DASHBOARD_PORT', 0);
  for (const [name, taken] of [
    ['METRICS_PORT', common.metrics.port],
    ['HEALTH_PORT', common.health.port],
  ] as const) {
    if (port === taken)
      env.conflict(`QUEUE_DASHBOARD_PORT and ${name} must differ, both are ${port}`);
  }
  return { port, bindAddress: env.bindAddress('QUEUE_DASHBOARD_BIND_ADDRESS', '0.0.0.0') };
}
