import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { AddressInfo } from 'node:net';
import { closeServer, createOperatorMetrics, createRegistry, serveMetrics } from '../src/index.js';

async function scrape(metrics: ReturnType<typeof createOperatorMetrics>): Promise<string> {
  return metrics.registry.metrics();
}

function sample(text: string, series: string): number | undefined {
  const line = text.split('\n').find((l) => l.startsWith(`${series} `));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
}

/** The single-label series of controller `backupjob`, by name without the common prefix. */
function perController(text: string): Record<string, number | undefined> {
  const names = [
    'reconcile_errors_total',
    'terminal_reconcile_errors_total',
    'active_workers',
    'max_concurrent_reconciles',
    'reconcile_time_seconds_count',
  ];
  return Object.fromEntries(
    names.map((n) => [n, sample(text, `controller_runtime_${n}{controller="backupjob"}`)]),
  );
}

/** controller_runtime_reconcile_total of controller `backupjob` by result. */
function totals(text: string): Record<string, number | undefined> {
  return Object.fromEntries(
    ['success', 'error', 'requeue', 'requeue_after'].map((result) => [
      result,
      sample(text, `controller_runtime_reconcile_total{controller="backupjob",result="${result}"}`),
    ]),
  );
}

describe('registry', () => {
  test('private registries: two can coexist and process metrics are collected', async () => {
    const a = createOperatorMetrics();
    const b = createOperatorMetrics();
    a.leaderElection.set('lease-a', true);
    const textA = await scrape(a);
    const textB = await scrape(b);
    assert.match(textA, /^process_cpu_user_seconds_total /m);
    assert.match(textA, /^nodejs_eventloop_lag_seconds /m);
    assert.equal(sample(textA, 'leader_election_master_status{name="lease-a"}'), 1);
    assert.equal(sample(textB, 'leader_election_master_status{name="lease-a"}'), undefined);
  });

  test('defaultMetrics: false leaves process metrics out', async () => {
    const metrics = createOperatorMetrics(createRegistry({ defaultMetrics: false }));
    assert.doesNotMatch(await scrape(metrics), /process_cpu/);
  });

  test("controller-runtime's names, types and labels", async () => {
    const metrics = createOperatorMetrics(createRegistry({ defaultMetrics: false }));
    metrics.controller.forController('backupjob', 10);
    metrics.restClient.observe('GET', '127.0.0.1:6443', 200, 0.01);
    metrics.leaderElection.set('backupjob-operator-watcher', false);
    metrics.leaderElection.fenced('backupjob-operator-watcher', 3);
    const text = await scrape(metrics);
    const types = Object.fromEntries(
      [...text.matchAll(/^# TYPE (\S+) (\S+)$/gm)].map((m) => [m[1], m[2]]),
    );
    assert.deepEqual(types, {
      controller_runtime_reconcile_total: 'counter',
      controller_runtime_reconcile_errors_total: 'counter',
      controller_runtime_terminal_reconcile_errors_total: 'counter',
      controller_runtime_reconcile_time_seconds: 'histogram',
      controller_runtime_active_workers: 'gauge',
      controller_runtime_max_concurrent_reconciles: 'gauge',
      backupjob_operator_invalid_keys_total: 'counter',
      backupjob_operator_resync_skipped_total: 'counter',
      leader_election_master_status: 'gauge',
      leader_election_fenced_writes_total: 'counter',
      rest_client_requests_total: 'counter',
      rest_client_request_duration_seconds: 'histogram',
    });
    assert.equal(
      sample(text, 'rest_client_requests_total{code="200",method="GET",host="127.0.0.1:6443"}'),
      1,
    );
    assert.equal(
      sample(text, 'rest_client_request_duration_seconds_count{verb="GET",host="127.0.0.1:6443"}'),
      1,
    );
    assert.equal(
      sample(text, 'leader_election_master_status{name="backupjob-operator-watcher"}'),
      0,
    );
    assert.equal(
      sample(text, 'leader_election_fenced_writes_total{name="backupjob-operator-watcher"}'),
      3,
    );
  });

  test('forController starts every series at zero and sets max concurrent reconciles', async () => {
    const metrics = createOperatorMetrics(createRegistry({ defaultMetrics: false }));
    metrics.controller.forController('backupjob', 7);
    const text = await scrape(metrics);
    assert.deepEqual(totals(text), { success: 0, error: 0, requeue: 0, requeue_after: 0 });
    assert.deepEqual(perController(text), {
      reconcile_errors_total: 0,
      terminal_reconcile_errors_total: 0,
      active_workers: 0,
      max_concurrent_reconciles: 7,
      // as in controller-runtime, the histogram appears with the first reconcile
      reconcile_time_seconds_count: undefined,
    });
  });

  test('the recorder counts results, errors, terminal errors, active workers and time', async () => {
    const metrics = createOperatorMetrics(createRegistry({ defaultMetrics: false }));
    const recorder = metrics.controller.forController('backupjob', 4);
    const first = recorder.start();
    const second = recorder.start();
    const third = recorder.start();
    assert.equal(perController(await scrape(metrics)).active_workers, 3);
    first('success');
    first('error'); // a second call for the same reconcile is ignored
    second('error', { terminal: true });
    third('requeue_after');
    recorder.start()('error');
    const text = await scrape(metrics);
    assert.deepEqual(totals(text), { success: 1, error: 2, requeue: 0, requeue_after: 1 });
    assert.deepEqual(perController(text), {
      reconcile_errors_total: 2,
      terminal_reconcile_errors_total: 1,
      active_workers: 0,
      max_concurrent_reconciles: 4,
      reconcile_time_seconds_count: 4,
    });
    assert.match(
      text,
      /controller_runtime_reconcile_time_seconds_bucket\{le="0.005",controller="backupjob"\}/,
    );
    assert.match(
      text,
      /controller_runtime_reconcile_time_seconds_bucket\{le="60",controller="backupjob"\}/,
    );
  });
});

describe('serveMetrics', () => {
  test('appends the text sources after the registry, chunked ones in order, and leaves a failing source out', async () => {
    const metrics = createOperatorMetrics(createRegistry({ defaultMetrics: false }));
    metrics.leaderElection.set('lease-x', true);
    metrics.textSources.add(
      async () => '# TYPE bullmq_job_count gauge\nbullmq_job_count{queue="q-0",state="wait"} 3',
    );
    metrics.textSources.add(() => Promise.reject(new Error('Redis is unreachable')));
    const lines = Array.from({ length: 3000 }, (_, i) => `backupjob_ready{name="bj-${i}"} 1\n`);
    metrics.textSources.add(async () =>
      (function* () {
        yield '# TYPE backupjob_ready gauge\n';
        for (let i = 0; i < lines.length; i += 1000) yield lines.slice(i, i + 1000).join('');
      })(),
    );
    const server = await serveMetrics(
      metrics.registry,
      0,
      '127.0.0.1',
      undefined,
      metrics.textSources,
    );
    try {
      const { port } = server.address() as AddressInfo;
      const text = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
      assert.equal(sample(text, 'leader_election_master_status{name="lease-x"}'), 1);
      assert.equal(sample(text, 'bullmq_job_count{queue="q-0",state="wait"}'), 3);
      assert.ok(text.endsWith(`# TYPE backupjob_ready gauge\n${lines.join('')}`));
    } finally {
      await closeServer(server);
    }
  });
});
