import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { Redis } from 'ioredis';
import { LABEL_MANAGED_BY, LABEL_OWNER_NAME, MANAGED_BY_VALUE } from '#api';
import { collectionPath, CRONJOBS, JOBS, type KubeObject } from '#kube';
import { cronJobName } from '#reconciler';
import { eventually, type RedisServer, startRedisServer } from '#testing';
import { type KubeCluster, startKubeCluster } from '#testing/kube-cluster';
import { KeySource, type KeySink } from '#watch';
import { RedisSnapshotStore, type WorldSnapshot } from '../src/index.js';

const NS = 'ops';
const OTHER_NS = 'dev';
const OPERATOR = MANAGED_BY_VALUE;
const LAST_APPLIED = 'kubectl.kubernetes.io/last-applied-configuration';

/**
 * A queue that, as each key arrives, reads the snapshot Redis holds for it at that moment (what a
 * worker taking the key at once would reconcile from) and records it `answerMs` later, as a queue
 * that is slow to answer would.
 */
class SnapshotCheckingSink implements KeySink {
  readonly seen: { key: string; snapshot: WorldSnapshot | undefined }[] = [];
  constructor(
    private readonly store: RedisSnapshotStore,
    private readonly answerMs: number,
  ) {}

  async addBulk(keys: Iterable<string>): Promise<void> {
    const read = await Promise.all(
      [...keys].map(async (key) => ({ key, snapshot: await this.store.read(key) })),
    );
    if (this.answerMs > 0) await sleep(this.answerMs);
    this.seen.push(...read);
  }

  last(key: string) {
    return this.seen.findLast((s) => s.key === key);
  }
}

// A slow queue widens the moment between a snapshot written and its key recorded, in which a
// test that counts the sends of one step could count a send of the step before.
for (const answerMs of [0, 30])
  describe(`KeySource writes snapshots for the workers (queue answering in ${answerMs} ms)`, () => {
    let cluster: KubeCluster;
    let redis: RedisServer;
    let client: Redis;
    let store: RedisSnapshotStore;
    let sink: SnapshotCheckingSink;
    let controller: KeySource;

    const start = () => {
      const c = new KeySource({
        rest: cluster.rest,
        queue: sink,
        snapshots: store,
        namespaces: [NS],
        fieldManager: OPERATOR,
        watchdogMs: 1000,
        settleMs: 50,
        backoff: { initialMs: 20, maxMs: 200 },
      });
      c.start();
      return c;
    };
    const create = (type: typeof CRONJOBS, body: unknown) =>
      cluster.rest.request<KubeObject>({ method: 'POST', path: collectionPath(type, NS), body });
    const snapshotOf = (name: string) => store.read(`${NS}/${name}`);

    before(async () => {
      [cluster, redis] = await Promise.all([startKubeCluster(), startRedisServer()]);
      client = new Redis(redis.url);
      store = new RedisSnapshotStore(client, { name: 'test' });
      sink = new SnapshotCheckingSink(store, answerMs);
      // Left by an earlier term: its BackupJob no longer exists.
      await store.write([
        [`${NS}/ghost`, { backupJob: { metadata: { name: 'ghost' } }, jobs: [] }],
      ]);
      await cluster.backupJobs.create(NS, 'pre');
      controller = start();
      await eventually('the controller to sync', () => controller.synced);
    });
    after(async () => {
      await controller.stop();
      client.disconnect();
      await Promise.all([cluster.stop(), redis.stop()]);
    });

    test('a new term writes every snapshot before the key, and sweeps those of BackupJobs gone', async () => {
      await eventually('pre to be enqueued', () => sink.last(`${NS}/pre`) !== undefined);
      assert.equal(sink.last(`${NS}/pre`)?.snapshot?.backupJob.metadata.name, 'pre');
      await eventually('ghost to be swept', async () => (await snapshotOf('ghost')) === undefined);
    });

    test('a change reaches the queue only after a snapshot that shows it', async () => {
      await cluster.backupJobs.create(NS, 'edited');
      const patched = await cluster.backupJobs.patch(NS, 'edited', {
        spec: { retentionDays: 9 },
      });
      await eventually(
        'the spec change',
        () =>
          sink.last(`${NS}/edited`)?.snapshot?.backupJob.metadata.resourceVersion ===
          patched.metadata.resourceVersion,
      );
      for (const { key, snapshot } of sink.seen.filter((s) => s.key === `${NS}/edited`)) {
        assert.ok(snapshot, `${key} was enqueued without a snapshot`);
      }
      const spec = (
        sink.last(`${NS}/edited`)?.snapshot?.backupJob as { spec?: { retentionDays?: number } }
      ).spec;
      assert.equal(spec?.retentionDays, 9);
    });

    test('the snapshot holds the BackupJob, its CronJob and Jobs, trimmed', async () => {
      const owner = await cluster.backupJobs.patch(NS, 'pre', {
        metadata: { annotations: { [LAST_APPLIED]: '{"big":"json"}', note: 'kept' } },
      });
      const labels = { [LABEL_MANAGED_BY]: MANAGED_BY_VALUE, [LABEL_OWNER_NAME]: 'pre' };
      const ownerRef = {
        apiVersion: 'ops.example.com/v1alpha1',
        kind: 'BackupJob',
        name: 'pre',
        uid: owner.metadata.uid!,
        controller: true,
      };
      await create(CRONJOBS, {
        apiVersion: 'batch/v1',
        kind: 'CronJob',
        metadata: { name: cronJobName('pre'), namespace: NS, labels, ownerReferences: [ownerRef] },
        spec: {
          schedule: '@daily',
          jobTemplate: {
            spec: {
              template: {
                spec: { restartPolicy: 'OnFailure', containers: [{ name: 'b', image: 'i' }] },
              },
            },
          },
        },
      });
      for (let i = 1; i <= 3; i++) {
        await create(JOBS, {
          apiVersion: 'batch/v1',
          kind: 'Job',
          metadata: { name: `pre-${i}`, namespace: NS, labels },
          spec: {
            template: { spec: { restartPolicy: 'Never', containers: [{ name: 'b', image: 'i' }] } },
          },
        });
      }
      await eventually(
        'the Jobs to reach the snapshot',
        async () => (await snapshotOf('pre'))?.jobs.length === 3,
      );
      const snapshot = (await snapshotOf('pre'))!;
      assert.equal(snapshot.cronJob?.metadata.name, cronJobName('pre'));
      assert.equal((snapshot.cronJob as { spec?: { schedule?: string } }).spec?.schedule, '@daily');
      assert.deepEqual(snapshot.jobs.map((j) => j.metadata.name).sort(), [
        'pre-1',
        'pre-2',
        'pre-3',
      ]);
      for (const obj of [snapshot.backupJob, snapshot.cronJob!, ...snapshot.jobs]) {
        assert.equal(
          obj.metadata.managedFields,
          undefined,
          `${obj.metadata.name} kept managedFields`,
        );
      }
      assert.deepEqual(snapshot.backupJob.metadata.annotations, { note: 'kept' });
      assert.equal((snapshot.jobs[0] as { spec?: unknown }).spec, undefined);
    });

    test("the operator's own status write rewrites the snapshot; its key follows once, after it settled, with that snapshot", async () => {
      // The Jobs of the test before may still be on their way: their snapshot is written before
      // their key is sent, so a send of theirs could otherwise be counted here. So in every test
      // that counts sends.
      await controller.flushed();
      const before = sink.seen.length;
      const written = await cluster.backupJobs.patchStatus(
        NS,
        'pre',
        { message: 'mine' },
        OPERATOR,
      );
      await eventually(
        'the snapshot to show the status write',
        async () =>
          (await snapshotOf('pre'))?.backupJob.metadata.resourceVersion ===
          written.metadata.resourceVersion,
      );
      await controller.flushed();
      const sent = sink.seen.slice(before).filter((s) => s.key === `${NS}/pre`);
      assert.equal(sent.length, 1);
      assert.equal(
        sent[0]?.snapshot?.backupJob.metadata.resourceVersion,
        written.metadata.resourceVersion,
      );
    });

    test('a deleted BackupJob loses its snapshot before its key is enqueued', async () => {
      await cluster.backupJobs.create(NS, 'doomed');
      await eventually('a snapshot', async () => (await snapshotOf('doomed')) !== undefined);
      await controller.flushed();
      const before = sink.seen.length;
      await cluster.backupJobs.delete(NS, 'doomed');
      await eventually('the delete to enqueue the key', () =>
        sink.seen.slice(before).some((s) => s.key === `${NS}/doomed`),
      );
      assert.equal(sink.last(`${NS}/doomed`)?.snapshot, undefined);
      assert.equal(await snapshotOf('doomed'), undefined);
    });

    test('namespaces outside the watched ones get no snapshot', async () => {
      await cluster.backupJobs.create(OTHER_NS, 'elsewhere');
      await cluster.backupJobs.create(NS, 'after-elsewhere');
      await eventually(
        'a snapshot in the watched namespace',
        async () => (await snapshotOf('after-elsewhere')) !== undefined,
      );
      assert.equal(await store.read(`${OTHER_NS}/elsewhere`), undefined);
    });

    test('after Redis lost its data, reAddAll rewrites each snapshot before its key', async () => {
      await controller.flushed();
      await redis.restartEmpty();
      await eventually(
        'Redis to answer',
        async () => (await client.ping().catch(() => '')) === 'PONG',
      );
      assert.equal(await snapshotOf('pre'), undefined);
      const before = sink.seen.length;
      const count = controller.reAddAll();
      await controller.flushed();
      const readded = sink.seen.slice(before);
      assert.equal(readded.length, count);
      for (const { key, snapshot } of readded) {
        assert.equal(
          snapshot?.backupJob.metadata.namespace,
          NS,
          `${key} re-added without a snapshot`,
        );
      }
      assert.equal((await snapshotOf('pre'))?.jobs.length, 3);
    });
  });
