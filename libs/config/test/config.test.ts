import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  ConfigError,
  configSummary,
  DEFAULT_BACKUP_IMAGE,
  loadWatcherConfig,
  loadWorkerConfig,
  redisConnection,
  type Env,
} from '../src/index.js';

let dir: string;
let saNamespaceFile: string;
const noPod = { serviceAccountNamespaceFile: '/nonexistent/namespace', hostname: 'host-1' };

before(() => {
  dir = mkdtempSync(join(tmpdir(), 'config-test-'));
  saNamespaceFile = join(dir, 'namespace');
  writeFileSync(saNamespaceFile, 'backup-operator-system\n');
  writeFileSync(join(dir, 'kubeconfig'), 'apiVersion: v1\nkind: Config\n');
});
after(() => rmSync(dir, { recursive: true, force: true }));

const worker = (env: Env) => loadWorkerConfig(env, noPod);
const watcher = (env: Env) => loadWatcherConfig(env, noPod);

function problems(load: (env: Env) => unknown, env: Env): readonly string[] {
  try {
    load(env);
  } catch (err) {
    assert.ok(err instanceof ConfigError, `expected ConfigError, got ${String(err)}`);
    assert.equal(err.message, err.problems.join('; '));
    return err.problems;
  }
  assert.fail(`configuration ${JSON.stringify(env)} was accepted`);
}

describe('defaults', () => {
  test('worker: everything has a default', () => {
    const config = worker({});
    assert.equal(config.app, 'worker');
    assert.equal(config.kubeconfig, undefined);
    assert.deepEqual(
      { ...config.redis },
      {
        mode: 'standalone',
        host: '127.0.0.1',
        port: 6379,
        db: 0,
        username: undefined,
        password: undefined,
        tls: false,
        address: 'redis://127.0.0.1:6379/0',
      },
    );
    assert.deepEqual(config.queue, {
      name: 'backupjob',
      shards: 16,
      lockDurationMs: 30_000,
      backoffBaseMs: 5,
      backoffMaxMs: 1_000_000,
    });
    assert.deepEqual(config.watchNamespaces, []);
    assert.deepEqual(config.metrics, {
      port: 8080,
      bindAddress: '0.0.0.0',
      secure: false,
      certDir: undefined,
    });
    assert.deepEqual(config.health, { port: 8081, bindAddress: '0.0.0.0' });
    assert.equal(config.logLevel, 'info');
    assert.equal(config.shutdownGracePeriodMs, 25_000);
    assert.match(config.podName, /^host-1_[0-9a-f-]{36}$/);
    assert.equal(config.podNamespace, 'default');
    assert.equal(config.concurrency, 10);
    assert.deepEqual(config.shards, [...Array(16).keys()]);
    assert.equal(config.backupImage, DEFAULT_BACKUP_IMAGE);
  });

  test('watcher: client-go leader election timings and a 10h resync', () => {
    const config = watcher({});
    assert.equal(config.app, 'watcher');
    assert.deepEqual(config.leaderElection, {
      namespace: 'default',
      id: 'backupjob-operator-watcher',
      identity: config.podName,
      leaseDurationMs: 15_000,
      renewDeadlineMs: 10_000,
      retryPeriodMs: 2000,
    });
    assert.equal(config.resyncPeriodMs, 36_000_000);
  });

  test('in a pod, the namespaces default to the service account namespace', () => {
    const config = loadWatcherConfig({}, { serviceAccountNamespaceFile: saNamespaceFile });
    assert.equal(config.podNamespace, 'backup-operator-system');
    assert.equal(config.leaderElection.namespace, 'backup-operator-system');
  });

  test('an empty value means the default', () => {
    const config = worker({ QUEUE_SHARDS: '', LOG_LEVEL: ' ', WATCH_NAMESPACES: '' });
    assert.equal(config.queue.shards, 16);
    assert.equal(config.logLevel, 'info');
    assert.deepEqual(config.watchNamespaces, []);
  });
});

describe('parsing', () => {
  test('every common variable is read', () => {
    const kubeconfig = join(dir, 'kubeconfig');
    const config = worker({
      KUBECONFIG: kubeconfig,
      QUEUE_NAME: 'bj-test',
      QUEUE_SHARDS: '4',
      QUEUE_LOCK_DURATION: '1m',
      BACKOFF_BASE: '10ms',
      BACKOFF_MAX: '5m',
      WATCH_NAMESPACES: ' ops , dev,ops ',
      METRICS_PORT: '9090',
      HEALTH_PORT: '9091',
      METRICS_BIND_ADDRESS: '127.0.0.1',
      HEALTH_BIND_ADDRESS: '::',
      LOG_LEVEL: 'WARN',
      SHUTDOWN_GRACE_PERIOD: '45s',
      POD_NAME: 'worker-7f9c',
      POD_NAMESPACE: 'ops-system',
    });
    assert.equal(config.kubeconfig, kubeconfig);
    assert.deepEqual(config.queue, {
      name: 'bj-test',
      shards: 4,
      lockDurationMs: 60_000,
      backoffBaseMs: 10,
      backoffMaxMs: 300_000,
    });
    assert.deepEqual(config.watchNamespaces, ['ops', 'dev']);
    assert.deepEqual(config.metrics, {
      port: 9090,
      bindAddress: '127.0.0.1',
      secure: false,
      certDir: undefined,
    });
    assert.deepEqual(config.health, { port: 9091, bindAddress: '::' });
    assert.equal(config.logLevel, 'warn');
    assert.equal(config.shutdownGracePeriodMs, 45_000);
    assert.equal(config.podName, 'worker-7f9c');
    assert.equal(config.podNamespace, 'ops-system');
  });

  test('KUBECONFIG may list several files', () => {
    const list = `${join(dir, 'kubeconfig')}:${saNamespaceFile}`;
    assert.equal(worker({ KUBECONFIG: list }).kubeconfig, list);
  });

  test('worker variables', () => {
    const config = worker({
      QUEUE_SHARDS: '12',
      WORKER_SHARDS: '8-11, 0,3,9',
      WORKER_CONCURRENCY: '32',
      BACKUP_IMAGE: 'registry.example.com:5000/ops/backup:1.2.3',
    });
    assert.deepEqual(config.shards, [0, 3, 8, 9, 10, 11]);
    assert.equal(config.concurrency, 32);
    assert.equal(config.backupImage, 'registry.example.com:5000/ops/backup:1.2.3');
  });

  test('watcher variables', () => {
    const config = watcher({
      LEADER_ELECTION_NAMESPACE: 'ops-system',
      LEADER_ELECTION_ID: 'bj.ops.example.com',
      LEADER_ELECTION_LEASE_DURATION: '30s',
      LEADER_ELECTION_RENEW_DEADLINE: '20s',
      LEADER_ELECTION_RETRY_PERIOD: '500ms',
      RESYNC_PERIOD: '1h30m',
      POD_NAME: 'watcher-0',
    });
    assert.deepEqual(config.leaderElection, {
      namespace: 'ops-system',
      id: 'bj.ops.example.com',
      identity: 'watcher-0',
      leaseDurationMs: 30_000,
      renewDeadlineMs: 20_000,
      retryPeriodMs: 500,
    });
    assert.equal(config.resyncPeriodMs, 5_400_000);
    assert.equal(config.queueDashboard, undefined, 'the queue dashboard is off by default');
  });

  test('QUEUE_DASHBOARD_PORT turns the queue dashboard on', () => {
    const config = watcher({
      QUEUE_DASHBOARD_PORT: '8082',
      QUEUE_DASHBOARD_BIND_ADDRESS: '127.0.0.1',
    });
    assert.deepEqual(config.queueDashboard, { port: 8082, bindAddress: '127.0.0.1' });
  });

  test('rediss:// with user, encoded password, database; REDIS_PASSWORD wins', () => {
    const url = 'rediss://ops:p%40ss@redis.example.com:6380/2';
    const fromUrl = worker({ REDIS_URL: url }).redis;
    assert.deepEqual(
      { ...fromUrl },
      {
        mode: 'standalone',
        host: 'redis.example.com',
        port: 6380,
        db: 2,
        username: 'ops',
        password: 'p@ss',
        tls: true,
        address: 'rediss://redis.example.com:6380/2',
      },
    );
    assert.equal(
      worker({ REDIS_URL: url, REDIS_PASSWORD: 'from-secret' }).redis.password,
      'from-secret',
    );
    assert.deepEqual(redisConnection(worker({ REDIS_URL: url, REDIS_PASSWORD: 's' }).redis), {
      redis: {
        host: 'redis.example.com',
        port: 6380,
        db: 2,
        username: 'ops',
        password: 's',
        tls: {},
      },
    });
  });

  test('IPv6 Redis host', () => {
    const redis = worker({ REDIS_URL: 'redis://[::1]:7000' }).redis;
    assert.equal(redis.mode, 'standalone');
    assert.deepEqual(redisConnection(redis), { redis: { host: '::1', port: 7000, db: 0 } });
  });

  test('REDIS_CLUSTER_NODES selects Cluster mode; password, user and TLS apply to every node', () => {
    const redis = worker({
      REDIS_CLUSTER_NODES: 'redis-0.redis:6379, 10.0.0.7:7000,[fd00::1]:6380,redis-3',
      REDIS_PASSWORD: 'pw',
      REDIS_USERNAME: 'operator',
      REDIS_TLS: 'true',
    }).redis;
    assert.equal(redis.mode, 'cluster');
    assert.equal(
      redis.address,
      'rediss+cluster://redis-0.redis:6379,10.0.0.7:7000,[fd00::1]:6380,redis-3:6379',
    );
    const { cluster } = redisConnection(redis);
    assert.ok(cluster);
    assert.deepEqual(cluster.nodes, [
      { host: 'redis-0.redis', port: 6379 },
      { host: '10.0.0.7', port: 7000 },
      { host: 'fd00::1', port: 6380 },
      { host: 'redis-3', port: 6379 },
    ]);
    assert.deepEqual(cluster.options.redisOptions, {
      username: 'operator',
      password: 'pw',
      tls: {},
    });
    // With TLS the node names are kept for the certificate check.
    const lookedUp: string[] = [];
    cluster.options.dnsLookup?.('redis-0.redis', (_err, address) => lookedUp.push(address));
    assert.deepEqual(lookedUp, ['redis-0.redis']);
  });

  test('REDIS_SENTINELS with REDIS_SENTINEL_MASTER selects Sentinel mode', () => {
    const redis = worker({
      REDIS_SENTINELS: 'sentinel-0:26379,sentinel-1',
      REDIS_SENTINEL_MASTER: 'mymaster',
      REDIS_PASSWORD: 'pw',
      REDIS_SENTINEL_PASSWORD: 'spw',
      REDIS_TLS: 'true',
    }).redis;
    assert.equal(redis.mode, 'sentinel');
    assert.equal(redis.address, 'rediss+sentinel://sentinel-0:26379,sentinel-1:26379/mymaster');
    assert.deepEqual(redisConnection(redis), {
      redis: {
        sentinels: [
          { host: 'sentinel-0', port: 26379 },
          { host: 'sentinel-1', port: 26379 },
        ],
        name: 'mymaster',
        password: 'pw',
        tls: {},
        sentinelPassword: 'spw',
        enableTLSForSentinelMode: true,
        sentinelTLS: {},
      },
    });
    const plain = worker({ REDIS_SENTINELS: 's:26379', REDIS_SENTINEL_MASTER: 'm' }).redis;
    assert.deepEqual(redisConnection(plain), {
      redis: { sentinels: [{ host: 's', port: 26379 }], name: 'm' },
    });
  });

  test('the summary names every setting that has a value, prints durations in Go notation and hides the password', () => {
    const config = worker({ REDIS_URL: 'redis://:hunter2@redis:6379', WORKER_SHARDS: '0-2' });
    const summary = configSummary(config);
    const names = Object.keys(summary);
    for (const [key, value] of Object.entries(config)) {
      if (value === undefined && key !== 'kubeconfig') continue;
      const name = key.replace(/Ms$/, '');
      assert.ok(
        names.some((n) => n === name || n.startsWith(`${name}.`)),
        `${key} is in the summary`,
      );
    }
    assert.equal(summary['redis.password'], '(set)');
    assert.ok(!JSON.stringify(summary).includes('hunter2'));
    assert.equal(summary['redis.address'], 'redis://redis:6379/0');
    assert.equal(summary['redis.mode'], 'standalone');
    assert.equal(summary['queue.backoffMax'], '16m40s');
    assert.equal(summary['shutdownGracePeriod'], '25s');
    assert.equal(summary['shards'], '0,1,2');
    assert.equal(summary['kubeconfig'], '(in-cluster)');
  });
});

test('METRICS_SECURE without a certificate stops start-up naming METRICS_CERT_DIR', () => {
  assert.throws(
    () => loadWorkerConfig({ METRICS_SECURE: 'true', METRICS_CERT_DIR: '/nonexistent' }),
    /METRICS_CERT_DIR must name a directory with readable tls\.crt and tls\.key/,
  );
});

describe('every bad value is named with what it accepts', () => {
  const range = (name: string, min: number, max: number, got: string) =>
    `${name} must be an integer from ${min} to ${max}, got "${got}"`;
  const duration = 'a duration such as "500ms", "15s" or "10h"';
  const redisExpected =
    'a URL such as redis://host:6379/0 or rediss://user:password@host:6380 (database 0 to 15)';
  const cases: [string, Env, string][] = [
    ['QUEUE_SHARDS', { QUEUE_SHARDS: 'abc' }, range('QUEUE_SHARDS', 1, 1024, 'abc')],
    ['QUEUE_SHARDS zero', { QUEUE_SHARDS: '0' }, range('QUEUE_SHARDS', 1, 1024, '0')],
    ['QUEUE_SHARDS too many', { QUEUE_SHARDS: '1025' }, range('QUEUE_SHARDS', 1, 1024, '1025')],
    ['QUEUE_SHARDS fraction', { QUEUE_SHARDS: '1.5' }, range('QUEUE_SHARDS', 1, 1024, '1.5')],
    ['METRICS_PORT', { METRICS_PORT: '70000' }, range('METRICS_PORT', 1, 65535, '70000')],
    ['HEALTH_PORT', { HEALTH_PORT: '-1' }, range('HEALTH_PORT', 1, 65535, '-1')],
    [
      'same ports',
      { METRICS_PORT: '9000', HEALTH_PORT: '9000' },
      'METRICS_PORT and HEALTH_PORT must differ, both are 9000',
    ],
    [
      'METRICS_BIND_ADDRESS',
      { METRICS_BIND_ADDRESS: 'example.com' },
      'METRICS_BIND_ADDRESS must be an IP address such as 0.0.0.0, 127.0.0.1 or ::, got "example.com"',
    ],
    [
      'HEALTH_BIND_ADDRESS',
      { HEALTH_BIND_ADDRESS: '10.0.0.300' },
      'HEALTH_BIND_ADDRESS must be an IP address such as 0.0.0.0, 127.0.0.1 or ::, got "10.0.0.300"',
    ],
    [
      'REDIS_URL scheme',
      { REDIS_URL: 'http://redis:6379' },
      `REDIS_URL must be ${redisExpected}, got "http://redis:6379"`,
    ],
    ['REDIS_URL text', { REDIS_URL: 'redis' }, `REDIS_URL must be ${redisExpected}, got "redis"`],
    [
      'REDIS_URL db',
      { REDIS_URL: 'redis://r:6379/16' },
      `REDIS_URL must be ${redisExpected}, got "redis://r:6379/16"`,
    ],
    [
      'REDIS_URL with REDIS_CLUSTER_NODES',
      { REDIS_URL: 'redis://r:6379', REDIS_CLUSTER_NODES: 'a:6379' },
      'REDIS_URL and REDIS_CLUSTER_NODES each select a Redis mode (one server, Cluster, Sentinel): set only one of them',
    ],
    [
      'REDIS_CLUSTER_NODES with REDIS_SENTINELS',
      { REDIS_CLUSTER_NODES: 'a:6379', REDIS_SENTINELS: 's:26379', REDIS_SENTINEL_MASTER: 'm' },
      'REDIS_CLUSTER_NODES and REDIS_SENTINELS each select a Redis mode (one server, Cluster, Sentinel): set only one of them',
    ],
    [
      'REDIS_SENTINELS without a master name',
      { REDIS_SENTINELS: 's:26379' },
      'REDIS_SENTINELS needs REDIS_SENTINEL_MASTER, the master name the Sentinels monitor',
    ],
    [
      'REDIS_SENTINEL_MASTER without Sentinels',
      { REDIS_SENTINEL_MASTER: 'mymaster' },
      'REDIS_SENTINEL_MASTER is set but REDIS_SENTINELS is not: Sentinel mode needs both',
    ],
    [
      'REDIS_SENTINEL_PASSWORD without Sentinels',
      { REDIS_CLUSTER_NODES: 'a:6379', REDIS_SENTINEL_PASSWORD: 'x' },
      'REDIS_SENTINEL_PASSWORD is set but REDIS_SENTINELS is not: Sentinel mode needs both',
    ],
    [
      'REDIS_CLUSTER_NODES not host:port',
      { REDIS_CLUSTER_NODES: 'a:6379,redis://b:6379' },
      'REDIS_CLUSTER_NODES must be a comma-separated list of host:port, such as redis-0:6379,redis-1:6379, got "redis://b:6379"',
    ],
    [
      'REDIS_SENTINELS port out of range',
      { REDIS_SENTINELS: 's:70000', REDIS_SENTINEL_MASTER: 'm' },
      'REDIS_SENTINELS must be a comma-separated list of host:port, such as redis-0:6379,redis-1:6379, got "s:70000"',
    ],
    [
      'REDIS_TLS',
      { REDIS_CLUSTER_NODES: 'a:6379', REDIS_TLS: 'yes' },
      'REDIS_TLS must be one of true|false, got "yes"',
    ],
    [
      'REDIS_TLS against the URL scheme',
      { REDIS_URL: 'redis://r:6379', REDIS_TLS: 'true' },
      'REDIS_TLS=true contradicts the redis:// scheme of REDIS_URL: with one server, the scheme says whether TLS is used (unset REDIS_TLS or change the scheme)',
    ],
    [
      'WATCH_NAMESPACES',
      { WATCH_NAMESPACES: 'ops,Bad_NS' },
      'WATCH_NAMESPACES must be a comma-separated list of namespace names, got "Bad_NS"',
    ],
    [
      'LOG_LEVEL',
      { LOG_LEVEL: 'verbose' },
      'LOG_LEVEL must be one of debug|info|warn|error, got "verbose"',
    ],
    [
      'SHUTDOWN_GRACE_PERIOD',
      { SHUTDOWN_GRACE_PERIOD: '30' },
      `SHUTDOWN_GRACE_PERIOD must be ${duration}, got "30"`,
    ],
    [
      'QUEUE_LOCK_DURATION',
      { QUEUE_LOCK_DURATION: '500ms' },
      'QUEUE_LOCK_DURATION must be a duration of at least 1000ms such as "500ms", "15s" or "10h", got "500ms"',
    ],
    [
      'BACKOFF_BASE',
      { BACKOFF_BASE: 'fast' },
      'BACKOFF_BASE must be a duration of at least 1ms such as "500ms", "15s" or "10h", got "fast"',
    ],
    [
      'BACKOFF_MAX below BACKOFF_BASE',
      { BACKOFF_BASE: '2s', BACKOFF_MAX: '1s' },
      'BACKOFF_BASE (2000ms) must not exceed BACKOFF_MAX (1000ms)',
    ],
    [
      'QUEUE_NAME',
      { QUEUE_NAME: 'back:up' },
      'QUEUE_NAME must be letters, digits, ".", "_" or "-" (at most 64, no ":" or braces), got "back:up"',
    ],
    [
      'POD_NAME',
      { POD_NAME: 'a b' },
      'POD_NAME must be a name of 1 to 128 characters without spaces, got "a b"',
    ],
    [
      'POD_NAMESPACE',
      { POD_NAMESPACE: 'ops_system' },
      'POD_NAMESPACE must be a namespace name, got "ops_system"',
    ],
    [
      'KUBECONFIG',
      { KUBECONFIG: '/nonexistent/kubeconfig' },
      'KUBECONFIG must be a readable kubeconfig file (or a ":"-separated list), got "/nonexistent/kubeconfig"',
    ],
  ];
  for (const [label, env, message] of cases) {
    test(`${label}: worker and watcher`, () => {
      assert.deepEqual(problems(worker, env), [message]);
      assert.deepEqual(problems(watcher, env), [message]);
    });
  }

  const workerCases: [string, Env, string][] = [
    ['WORKER_CONCURRENCY', { WORKER_CONCURRENCY: '0' }, range('WORKER_CONCURRENCY', 1, 1000, '0')],
    [
      'WORKER_SHARDS beyond QUEUE_SHARDS',
      { QUEUE_SHARDS: '4', WORKER_SHARDS: '2-4' },
      'WORKER_SHARDS must be shard numbers or ranges from 0 to 3 (QUEUE_SHARDS=4) such as "0,2,4-7", got "2-4"',
    ],
    [
      'WORKER_SHARDS reversed range',
      { WORKER_SHARDS: '5-3' },
      'WORKER_SHARDS must be shard numbers or ranges from 0 to 15 (QUEUE_SHARDS=16) such as "0,2,4-7", got "5-3"',
    ],
    [
      'WORKER_SHARDS words',
      { WORKER_SHARDS: 'all' },
      'WORKER_SHARDS must be shard numbers or ranges from 0 to 15 (QUEUE_SHARDS=16) such as "0,2,4-7", got "all"',
    ],
    [
      'BACKUP_IMAGE',
      { BACKUP_IMAGE: 'my image' },
      'BACKUP_IMAGE must be a container image reference such as registry.example.com/backup:1.0, got "my image"',
    ],
  ];
  for (const [label, env, message] of workerCases) {
    test(`${label}: worker`, () => assert.deepEqual(problems(worker, env), [message]));
  }

  const watcherCases: [string, Env, string][] = [
    [
      'QUEUE_DASHBOARD_PORT',
      { QUEUE_DASHBOARD_PORT: 'yes' },
      'QUEUE_DASHBOARD_PORT must be an integer from 1 to 65535, got "yes"',
    ],
    [
      'QUEUE_DASHBOARD_PORT on the metrics port',
      { QUEUE_DASHBOARD_PORT: '8080' },
      'QUEUE_DASHBOARD_PORT and METRICS_PORT must differ, both are 8080',
    ],
    [
      'QUEUE_DASHBOARD_PORT on the health port',
      { QUEUE_DASHBOARD_PORT: '8081' },
      'QUEUE_DASHBOARD_PORT and HEALTH_PORT must differ, both are 8081',
    ],
    [
      'RESYNC_PERIOD',
      { RESYNC_PERIOD: '0' },
      'RESYNC_PERIOD must be a duration of at least 1000ms such as "500ms", "15s" or "10h", got "0"',
    ],
    [
      'LEADER_ELECTION_LEASE_DURATION',
      { LEADER_ELECTION_LEASE_DURATION: '15' },
      'LEADER_ELECTION_LEASE_DURATION must be a duration of at least 1000ms such as "500ms", "15s" or "10h", got "15"',
    ],
    [
      'lease not longer than renew deadline',
      { LEADER_ELECTION_LEASE_DURATION: '10s' },
      'LEADER_ELECTION_LEASE_DURATION (10000ms) must be greater than LEADER_ELECTION_RENEW_DEADLINE (10000ms)',
    ],
    [
      'renew deadline within 1.2 retry periods',
      { LEADER_ELECTION_RETRY_PERIOD: '9s' },
      'LEADER_ELECTION_RENEW_DEADLINE (10000ms) must be greater than 1.2 × LEADER_ELECTION_RETRY_PERIOD (9000ms)',
    ],
    [
      'LEADER_ELECTION_NAMESPACE',
      { LEADER_ELECTION_NAMESPACE: 'Ops' },
      'LEADER_ELECTION_NAMESPACE must be a namespace name, got "Ops"',
    ],
    [
      'LEADER_ELECTION_ID',
      { LEADER_ELECTION_ID: 'Watcher_Lock' },
      'LEADER_ELECTION_ID must be a Lease name (lower-case DNS subdomain), got "Watcher_Lock"',
    ],
  ];
  for (const [label, env, message] of watcherCases) {
    test(`${label}: watcher`, () => assert.deepEqual(problems(watcher, env), [message]));
  }

  test('a variable one app does not read is not its concern', () => {
    assert.equal(watcher({ WORKER_CONCURRENCY: 'lots' }).app, 'watcher');
    assert.equal(worker({ RESYNC_PERIOD: 'never' }).app, 'worker');
  });

  test('all bad variables are reported together', () => {
    assert.deepEqual(
      problems(worker, { QUEUE_SHARDS: 'abc', METRICS_PORT: '70000', LOG_LEVEL: 'x' }),
      [
        range('METRICS_PORT', 1, 65535, '70000'),
        range('QUEUE_SHARDS', 1, 1024, 'abc'),
        'LOG_LEVEL must be one of debug|info|warn|error, got "x"',
      ],
    );
  });
});
