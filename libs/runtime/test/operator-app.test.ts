import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { start as startEmulator, type Emulator } from '#apiserver-emulator';
import {
  backupJobCrdDocument,
  eventually,
  freePort,
  startProcess,
  startRedisServer,
  type ManagedProcess,
  type RedisServer,
} from '#testing';

// The compiled entry points beside this compiled test: the real apps, as `npm run start:*` runs them.
const main = (app: string) =>
  fileURLToPath(new URL(`../../../apps/${app}/src/main.js`, import.meta.url));

// The apps talk to an API server from the start (their readiness includes it): one emulator
// serves every app this file starts.
let emulator: Emulator;
let kubeconfigDir: string;
let kubeconfigPath: string;
before(async () => {
  kubeconfigDir = mkdtempSync(join(tmpdir(), 'operator-app-'));
  kubeconfigPath = join(kubeconfigDir, 'kubeconfig');
  emulator = await startEmulator({ port: 0, kubeconfigPath });
  // A leading watcher is ready only once its informers list BackupJobs, which needs the CRD.
  emulator.objects.create(backupJobCrdDocument());
});
after(async () => {
  await emulator?.stop();
  rmSync(kubeconfigDir, { recursive: true, force: true });
});

interface RunningApp {
  readonly process: ManagedProcess;
  readonly health: string;
  readonly metrics: string;
}

async function startApp(app: string, redisUrl: string): Promise<RunningApp> {
  const [metricsPort, healthPort] = [await freePort(), await freePort()];
  const child = startProcess({
    name: app,
    command: process.execPath,
    args: [main(app)],
    env: {
      REDIS_URL: redisUrl,
      METRICS_PORT: String(metricsPort),
      HEALTH_PORT: String(healthPort),
      METRICS_BIND_ADDRESS: '127.0.0.1',
      HEALTH_BIND_ADDRESS: '127.0.0.1',
      LOG_LEVEL: 'info',
      KUBECONFIG: kubeconfigPath,
      SHUTDOWN_GRACE_PERIOD: undefined,
    },
  });
  await child.waitForLine(/"msg":"started"/);
  return {
    process: child,
    health: `http://127.0.0.1:${healthPort}`,
    metrics: `http://127.0.0.1:${metricsPort}`,
  };
}

async function get(url: string): Promise<{ status: number; type: string; body: string }> {
  const res = await fetch(url);
  return {
    status: res.status,
    type: res.headers.get('content-type') ?? '',
    body: await res.text(),
  };
}

/** Polls until the endpoint answers with `status`; returns that answer. */
async function waitForStatus(url: string, status: number, timeoutMs = 30_000) {
  let last: Awaited<ReturnType<typeof get>> | undefined;
  return eventually(
    () => `${url} to answer ${status}; last: ${JSON.stringify(last)}`,
    async () => {
      last = await get(url).catch(() => undefined);
      return last?.status === status && last;
    },
    timeoutMs,
  );
}

function runToExit(app: string, env: Record<string, string>) {
  return new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) => {
    const child = execFile(
      process.execPath,
      [main(app)],
      { env: { ...process.env, KUBECONFIG: kubeconfigPath, ...env }, timeout: 30_000 },
      (_err, stdout, stderr) => resolve({ code: child.exitCode, stdout, stderr }),
    );
  });
}

describe('the worker process', () => {
  let redis: RedisServer;
  let worker: RunningApp;
  before(async () => {
    redis = await startRedisServer();
    worker = await startApp('worker', redis.url);
  });
  after(async () => {
    await worker?.process.stop('SIGKILL');
    await redis?.stop();
  });

  test('/healthz and /readyz answer 200 with the Redis check up', async () => {
    const live = await get(`${worker.health}/healthz`);
    assert.equal(live.status, 200);
    assert.equal(JSON.parse(live.body).status, 'ok');
    const ready = await waitForStatus(`${worker.health}/readyz`, 200);
    const body = JSON.parse(ready.body);
    assert.equal(body.status, 'ok');
    assert.equal(body.details.redis.status, 'up');
  });

  test('/metrics serves Prometheus text on its own port', async () => {
    const metrics = await get(`${worker.metrics}/metrics`);
    assert.equal(metrics.status, 200);
    assert.match(metrics.type, /^text\/plain; version=0\.0\.4/);
    assert.match(metrics.body, /^# TYPE process_cpu_user_seconds_total counter$/m);
    assert.match(metrics.body, /^# TYPE rest_client_requests_total counter$/m);
    assert.equal((await get(`${worker.metrics}/healthz`)).status, 404);
    assert.equal((await get(`${worker.health}/metrics`)).status, 404);
  });

  test('readiness is 503 naming redis while Redis is down, 200 again when it is back', async () => {
    const admin = new Redis(redis.url, { lazyConnect: true, maxRetriesPerRequest: 0 });
    admin.on('error', () => undefined);
    await admin.connect();
    await admin.call('SHUTDOWN', 'NOSAVE').catch(() => undefined);
    admin.disconnect();

    const down = await waitForStatus(`${worker.health}/readyz`, 503);
    const body = JSON.parse(down.body);
    assert.equal(body.status, 'error');
    assert.equal(body.error.redis.status, 'down');
    // Either ioredis already saw the connection drop, or a ping sent just before failed after the
    // client's reconnect attempts for one command, or hung until the timeout.
    assert.match(
      body.error.redis.message,
      /^(redis connection is (connecting|reconnecting|close|end)|timeout of \d+ms exceeded|Reached the max retries per request limit .*)$/,
    );
    assert.equal(body.info.shutdown.status, 'up');
    assert.equal(
      (await get(`${worker.health}/healthz`)).status,
      200,
      'liveness does not follow Redis',
    );

    await redis.restartEmpty();
    await waitForStatus(`${worker.health}/readyz`, 200);
    await worker.process.waitForLine(/"msg":"readiness: not ready: redis"/);
  });

  test('every line it writes is one JSON object with time, level and msg', () => {
    assert.ok(worker.process.lines.length > 0);
    for (const line of worker.process.lines) {
      const entry = JSON.parse(line) as Record<string, unknown>;
      assert.equal(typeof entry.time, 'string');
      assert.match(String(entry.level), /^(debug|info|warn|error)$/);
      assert.equal(typeof entry.msg, 'string');
      assert.equal(entry.app, 'worker');
    }
    const started = JSON.parse(worker.process.lines.find((l) => l.includes('"started"'))!);
    assert.equal(started.config['queue.shards'], 16);
    assert.equal(started.config['kubeconfig'], kubeconfigPath);
  });
});

describe('start and stop', () => {
  let redis: RedisServer;
  before(async () => {
    redis = await startRedisServer();
  });
  after(() => redis?.stop());

  for (const app of ['worker', 'watcher']) {
    test(`${app}: SIGTERM runs the shutdown chain and exits 0 well within the grace period`, async () => {
      const running = await startApp(app, redis.url);
      await waitForStatus(`${running.health}/readyz`, 200);
      // stop() SIGKILLs after 15 s (below the 25 s grace period), which would give a null code.
      assert.equal(await running.process.stop('SIGTERM', 15_000), 0);
      assert.ok(running.process.lines.some((l) => l.includes('"msg":"shutdown complete"')));
    });
  }

  const bad: [string, string, Record<string, string>, RegExp][] = [
    [
      'worker',
      'QUEUE_SHARDS',
      { QUEUE_SHARDS: 'abc' },
      /QUEUE_SHARDS must be an integer from 1 to 1024, got \\"abc\\"/,
    ],
    [
      'worker',
      'METRICS_PORT',
      { METRICS_PORT: '70000' },
      /METRICS_PORT must be an integer from 1 to 65535, got \\"70000\\"/,
    ],
    [
      'watcher',
      'LEADER_ELECTION_RETRY_PERIOD',
      { LEADER_ELECTION_RETRY_PERIOD: 'soon' },
      /LEADER_ELECTION_RETRY_PERIOD must be a duration/,
    ],
    ['watcher', 'REDIS_URL', { REDIS_URL: 'http://redis' }, /REDIS_URL must be a URL/],
  ];
  for (const [app, variable, env, message] of bad) {
    test(`${app}: a bad ${variable} exits non-zero naming it on stderr`, async () => {
      const result = await runToExit(app, env);
      assert.notEqual(result.code, 0);
      assert.notEqual(result.code, null);
      assert.match(result.stderr, message);
      assert.equal(JSON.parse(result.stderr.trim()).level, 'error');
      assert.equal(result.stdout, '');
    });
  }

  test('outside a cluster without KUBECONFIG, start-up fails and says so', async () => {
    const result = await runToExit('worker', {
      REDIS_URL: redis.url,
      KUBECONFIG: '',
      KUBERNETES_SERVICE_HOST: '',
      METRICS_PORT: String(await freePort()),
      HEALTH_PORT: String(await freePort()),
    });
    assert.equal(result.code, 1);
    assert.match(result.stdout, /"msg":"start failed".*KUBECONFIG is not set/);
  });

  test('a metrics port that is taken stops start-up with exit code 1', async () => {
    const blocker = await startApp('worker', redis.url);
    const port = new URL(blocker.metrics).port;
    try {
      const result = await runToExit('worker', {
        REDIS_URL: redis.url,
        METRICS_PORT: port,
        HEALTH_PORT: String(await freePort()),
        METRICS_BIND_ADDRESS: '127.0.0.1',
      });
      assert.equal(result.code, 1);
      assert.match(result.stdout, /"msg":"start failed".*EADDRINUSE/);
    } finally {
      await blocker.process.stop('SIGTERM');
    }
  });
});
