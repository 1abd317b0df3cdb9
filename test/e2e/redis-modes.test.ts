import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { Cluster } from 'ioredis';
import { API_VERSION, KIND } from '#api';
import { RedisSnapshotStore } from '#snapshot';
import {
  eventually,
  freePort,
  type OperatorSystem,
  type RedisMode,
  startOperatorSystem,
} from '#testing';
import {
  backupJobManifest,
  getCronJob,
  isConverged,
  metricValue,
  scrapeMetrics,
} from './support.js';

// The whole operator on the Redis topologies platform teams run: a Redis Cluster (3 primaries,
// a replica each) reached through REDIS_CLUSTER_NODES, and a primary with a replica behind a
// Sentinel reached through REDIS_SENTINELS. The watcher serves its dashboard on the same Redis.

const NAMESPACE = 'ops';
const COUNT = 12;
const names = Array.from({ length: COUNT }, (_, i) => `bj-${i}`);

for (const mode of ['cluster', 'sentinel'] as RedisMode[]) {
  describe(
    `the operator on ${mode === 'cluster' ? 'a Redis Cluster' : 'Redis Sentinel'}`,
    { timeout: 240_000 },
    () => {
      let sys: OperatorSystem;
      let dashboardPort: number;
      before(async () => {
        dashboardPort = await freePort();
        sys = await startOperatorSystem({
          redisMode: mode,
          watchers: 0,
          workers: 2,
          // Production's shard count, so that the shards spread over every primary.
          env: { QUEUE_SHARDS: '16' },
          emulator: { namespaces: [NAMESPACE] },
        });
        await sys.startWatcher({
          QUEUE_DASHBOARD_PORT: String(dashboardPort),
          QUEUE_DASHBOARD_BIND_ADDRESS: '127.0.0.1',
        });
      });
      after(() => sys?.stop());

      test('BackupJobs converge, then follow their changes', async () => {
        for (const name of names) sys.emulator.objects.create(backupJobManifest(NAMESPACE, name));
        await eventually(
          `${COUNT} BackupJobs to converge`,
          () => names.every((n) => isConverged(sys, NAMESPACE, n)),
          90_000,
        );
        for (const name of names) {
          sys.emulator.objects.patch(API_VERSION, KIND, name, NAMESPACE, {
            spec: { schedule: '*/5 * * * *' },
          });
        }
        await eventually(
          'every CronJob to carry the new schedule',
          () =>
            names.every(
              (n) =>
                (getCronJob(sys, NAMESPACE, n)?.spec as { schedule?: string }).schedule ===
                  '*/5 * * * *' && isConverged(sys, NAMESPACE, n),
            ),
          90_000,
        );
      });

      test('every process reports Redis up and counts its reconciles', async () => {
        for (const proc of [...sys.watchers, ...sys.workers]) {
          const res = await fetch(`http://127.0.0.1:${sys.portsOf(proc).health}/readyz`);
          const body = (await res.json()) as { details: Record<string, { status: string }> };
          assert.equal(res.status, 200, `${proc.name}: ${JSON.stringify(body)}`);
          assert.equal(body.details.redis?.status, 'up');
        }
        let reconciles = 0;
        for (const worker of sys.workers) {
          reconciles += metricValue(
            await scrapeMetrics(sys, worker),
            'controller_runtime_reconcile_total',
          );
        }
        assert.ok(reconciles >= 2 * COUNT, `${reconciles} reconciles`);
        // The watcher's BullMQ export reads every shard's queue on this Redis.
        const text = await scrapeMetrics(sys, sys.watchers[0]!);
        assert.match(text, /^bullmq_job_count\{queue="backupjob-15",state="completed"\} \d+$/m);
      });

      test('the read-only queue dashboard lists every shard queue', async () => {
        const res = await fetch(`http://127.0.0.1:${dashboardPort}/api/queues`);
        assert.equal(res.status, 200);
        const api = (await res.json()) as { queues: { name: string }[] };
        assert.equal(api.queues.length, 16);
      });

      if (mode === 'cluster') {
        test('the queue spreads over every primary; the snapshots are readable from all', async () => {
          const client = sys.redisDeployment.client() as Cluster;
          try {
            await client.ping(); // connected: the slot map and a connection per primary are there
            const primaries = client.nodes('master');
            assert.equal(primaries.length, 3);
            const queueKeys = await Promise.all(
              primaries.map(async (node) => {
                let count = 0;
                for await (const batch of node.scanStream({
                  match: 'wq:{backupjob:*',
                  count: 1000,
                })) {
                  count += (batch as string[]).length;
                }
                return count;
              }),
            );
            assert.ok(
              queueKeys.every((n) => n > 0),
              `queue keys per primary: ${queueKeys.join(', ')}`,
            );
            const store = new RedisSnapshotStore(client, { name: 'backupjob', shards: 16 });
            const snapshots: string[] = [];
            for await (const key of store.keys()) snapshots.push(key);
            assert.deepEqual(snapshots.sort(), names.map((n) => `${NAMESPACE}/${n}`).sort());
          } finally {
            client.disconnect();
          }
        });
      }
    },
  );
}
