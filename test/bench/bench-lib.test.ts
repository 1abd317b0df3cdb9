import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { RateLimitingQueue } from '#bench/baseline/workqueue';
import { Tracker } from '#bench/env/tracker';
import { withWorld } from '#bench/env/world';
import { memoryCgroupRoot } from '#bench/lib/cgroup';
import { chartContainers } from '#bench/scenarios/memory-limit';
import { fractionAtMost, histogramQuantile, parseMetrics, bucketsOf, sumOf } from '#bench/lib/prom';
import { quantile, summarize } from '#bench/lib/stats';
import { runCommand } from '#testing';

describe('stats', () => {
  test('quantiles interpolate between closest ranks', () => {
    assert.equal(quantile([1, 2, 3, 4], 0.5), 2.5);
    assert.equal(quantile([10], 0.99), 10);
    const s = summarize([5, 1, 3]);
    assert.deepEqual([s.min, s.p50, s.max, s.count], [1, 3, 5, 3]);
  });
});

describe('prometheus text', () => {
  const text = [
    '# HELP workqueue_queue_duration_seconds x',
    'workqueue_queue_duration_seconds_bucket{name="a",le="0.1"} 50',
    'workqueue_queue_duration_seconds_bucket{name="a",le="1"} 99',
    'workqueue_queue_duration_seconds_bucket{name="a",le="+Inf"} 100',
    'controller_runtime_reconcile_total{controller="b",result="success"} 7',
    'controller_runtime_reconcile_total{controller="b",result="error"} 2',
  ].join('\n');
  const samples = parseMetrics(text);

  test('sums a counter over its series and filters by label', () => {
    assert.equal(sumOf(samples, 'controller_runtime_reconcile_total'), 9);
    assert.equal(sumOf(samples, 'controller_runtime_reconcile_total', { result: 'error' }), 2);
  });

  test('estimates quantiles inside buckets and reads the share under a bound', () => {
    const b = bucketsOf(samples, 'workqueue_queue_duration_seconds');
    assert.equal(fractionAtMost(b, 1), 0.99);
    assert.equal(histogramQuantile(0.5, b), 0.1);
    assert.ok(Math.abs(histogramQuantile(0.99, b) - 1) < 1e-9);
  });
});

describe('baseline workqueue (client-go semantics)', () => {
  test('a key waits once however often it is added', async () => {
    const q = new RateLimitingQueue<string>();
    q.add('a');
    q.add('a');
    q.add('b');
    assert.equal(q.len(), 2);
    assert.equal(await q.get(), 'a');
    assert.equal(await q.get(), 'b');
  });

  test('a key added while it runs runs again after done, never twice at once', async () => {
    const q = new RateLimitingQueue<string>();
    q.add('a');
    assert.equal(await q.get(), 'a');
    q.add('a');
    assert.equal(q.len(), 0, 'not handed out while processing');
    q.done('a');
    assert.equal(q.len(), 1);
    assert.equal(await q.get(), 'a');
  });

  test('addAfter keeps the earliest ready time and a real add does not wait', async () => {
    const q = new RateLimitingQueue<string>();
    q.addAfter('a', 60_000);
    q.addAfter('a', 10);
    await new Promise((r) => setTimeout(r, 50));
    assert.equal(q.len(), 1);
    q.addAfter('b', 60_000);
    q.add('b');
    assert.equal(q.len(), 2);
    q.shutDown();
  });

  test('failures back off per key from 5 ms, doubling, and forget resets', () => {
    const q = new RateLimitingQueue<string>();
    assert.deepEqual(
      [q.limiter.when('a'), q.limiter.when('a'), q.limiter.when('a'), q.limiter.when('b')],
      [5, 10, 20, 5],
    );
    q.forget('a');
    assert.equal(q.limiter.when('a'), 5);
  });
});

describe('tracker', () => {
  const bj = (name: string, generation: number, observed: number, ready: boolean) => ({
    metadata: { namespace: 'n', name, generation },
    status: {
      observedGeneration: observed,
      conditions: [{ type: 'Ready', status: ready ? 'True' : 'False' }],
    },
  });

  test('times creation to CronJob and Ready, and spec change to observedGeneration', () => {
    let now = 1000;
    const t = new Tracker(() => now);
    t.onBackupJob('ADDED', { metadata: { namespace: 'n', name: 'x', generation: 1 } });
    now = 1100;
    t.onCronJob('ADDED', 'n/x');
    now = 1250;
    t.onBackupJob('MODIFIED', bj('x', 1, 1, true));
    assert.deepEqual(t.burstLatencies(0), [{ key: 'n/x', toCronJob: 100, toReady: 250 }]);
    assert.equal(t.counts().ready, 1);

    t.specChanged('n/x', 2, 2000);
    now = 2300;
    t.onBackupJob('MODIFIED', bj('x', 2, 1, true));
    assert.equal(t.counts().ready, 0, 'not ready at a generation it has not observed');
    assert.equal(t.counts().pendingChanges, 1);
    now = 2400;
    t.onBackupJob('MODIFIED', bj('x', 2, 2, true));
    assert.deepEqual(t.takeChangeLatencies(), [400]);
    assert.equal(t.counts().pendingChanges, 0);
  });
});

describe('memory limits', () => {
  test("finds this process's memory cgroup on cgroup v1, else v2", () => {
    const v1 = '9:name=systemd:/\n4:memory:/pods/p1\n0::/\n';
    assert.deepEqual(memoryCgroupRoot(v1), { dir: '/sys/fs/cgroup/memory/pods/p1', version: 1 });
    assert.deepEqual(memoryCgroupRoot('0::/user.slice/s.scope\n'), {
      dir: '/sys/fs/cgroup/user.slice/s.scope',
      version: 2,
    });
    assert.throws(() => memoryCgroupRoot('1:cpu:/\n'), /no memory cgroup/);
  });

  test("reads the chart's memory limit and node options of the watcher and the worker", () => {
    const values = [
      'watcher:',
      "  nodeArgs: ['--max-semi-space-size=16']",
      '  resources:',
      '    limits:',
      '      memory: 256Mi',
      'worker:',
      '  resources:',
      '    limits:',
      '      memory: 1Gi',
    ].join('\n');
    assert.deepEqual(chartContainers(values), {
      watcher: { memoryLimit: 256 * 2 ** 20, nodeArgs: ['--max-semi-space-size=16'] },
      worker: { memoryLimit: 2 ** 30, nodeArgs: [] },
    });
    assert.throws(
      () => chartContainers(values.replace('256Mi', 'lots')),
      /watcher.resources.limits.memory/,
    );
  });
});

describe("the bench's API emulator", () => {
  test('serves HTTPS when a world asks for TLS, and its kubeconfig trusts it: kubectl lists the BackupJobs', async () => {
    await withWorld({ latencyMs: 0, objects: 2, tls: true }, async (emu) => {
      assert.match(emu.url, /^https:\/\//);
      const listed = await runCommand('kubectl', [
        '--kubeconfig',
        emu.kubeconfigPath,
        'get',
        'backupjobs',
        '--all-namespaces',
        '--no-headers',
      ]);
      assert.equal(listed.code, 0, listed.stderr);
      assert.equal(listed.stdout.trim().split('\n').length, 2, listed.stdout);
    });
  });
});
