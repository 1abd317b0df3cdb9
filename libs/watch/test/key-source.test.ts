import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { LABEL_MANAGED_BY, LABEL_OWNER_NAME, MANAGED_BY_VALUE } from '#api';
import {
  collectionPath,
  CRONJOBS,
  JOBS,
  objectPath,
  type KubeObject,
  type OwnerReference,
} from '#kube';
import { WorkQueue } from '#queue';
import { eventually, type RedisServer, startRedisServer } from '#testing';
import { type KubeCluster, startKubeCluster } from '#testing/kube-cluster';
import type { KeySink } from '../src/key-pump.js';
import { KeySource, type KeySourceOptions } from '../src/key-source.js';

type Priority = 'normal' | 'low';

/** Records every key the controller hands over, with its priority, in order. */
class RecordingSink implements KeySink {
  readonly added: { key: string; priority: Priority }[] = [];

  async addBulk(keys: Iterable<string>, options: { priority?: Priority } = {}): Promise<void> {
    for (const key of keys) this.added.push({ key, priority: options.priority ?? 'low' });
  }

  mark(): number {
    return this.added.length;
  }

  since(mark: number): string[] {
    return this.added.slice(mark).map((a) => `${a.priority} ${a.key}`);
  }
}

const OPERATOR = MANAGED_BY_VALUE;
const NS = 'wc';
const CHILD_LABELS = { [LABEL_MANAGED_BY]: MANAGED_BY_VALUE };

function controllerFor(
  cluster: KubeCluster,
  queue: KeySink,
  extra: Partial<KeySourceOptions> = {},
) {
  return new KeySource({
    rest: cluster.rest,
    queue,
    fieldManager: OPERATOR,
    watchdogMs: 1000,
    settleMs: 20,
    backoff: { initialMs: 20, maxMs: 200 },
    ...extra,
  });
}

const ownerRef = (kind: string, apiVersion: string, obj: KubeObject): OwnerReference => ({
  apiVersion,
  kind,
  name: obj.metadata.name!,
  uid: obj.metadata.uid!,
  controller: true,
  blockOwnerDeletion: true,
});

function cronJob(name: string, owner: KubeObject) {
  return {
    apiVersion: 'batch/v1',
    kind: 'CronJob',
    metadata: {
      name,
      namespace: NS,
      labels: { ...CHILD_LABELS, [LABEL_OWNER_NAME]: owner.metadata.name! },
      ownerReferences: [ownerRef('BackupJob', 'ops.example.com/v1alpha1', owner)],
    },
    spec: {
      schedule: '@daily',
      jobTemplate: {
        spec: {
          template: {
            spec: {
              restartPolicy: 'OnFailure',
              containers: [{ name: 'backup', image: 'backup:1' }],
            },
          },
        },
      },
    },
  };
}

function job(name: string, labels: Record<string, string>, owner?: OwnerReference) {
  return {
    apiVersion: 'batch/v1',
    kind: 'Job',
    metadata: { name, namespace: NS, labels, ...(owner ? { ownerReferences: [owner] } : {}) },
    spec: {
      template: {
        spec: { restartPolicy: 'Never', containers: [{ name: 'backup', image: 'backup:1' }] },
      },
    },
  };
}

describe('KeySource: events to owner keys', () => {
  let cluster: KubeCluster;
  let sink: RecordingSink;
  let controller: KeySource;

  before(async () => {
    cluster = await startKubeCluster();
    await cluster.createNamespace(NS);
    await cluster.backupJobs.create(NS, 'pre');
    sink = new RecordingSink();
    controller = controllerFor(cluster, sink, { namespaces: [NS] });
    controller.start();
    await eventually('the controller to sync', () => controller.synced && controller.healthy);
    await controller.flushed();
  });
  after(async () => {
    await controller.stop();
    await cluster.stop();
  });

  const create = (type: typeof CRONJOBS, body: unknown) =>
    cluster.rest.request<KubeObject>({ method: 'POST', path: collectionPath(type, NS), body });

  type Watched = 'backupjobs' | 'cronjobs' | 'jobs';

  /**
   * Runs `act`, then creates a sentinel object on the watch `act` affects and waits for the
   * sentinel's key: events of one watch arrive in order, so by then every event `act` caused on
   * that watch was handled. Returns the keys handed over meanwhile, sentinels' keys excluded.
   */
  async function keysFrom(
    act: () => Promise<unknown>,
    watched: Watched = 'backupjobs',
  ): Promise<string[]> {
    const mark = sink.mark();
    await act();
    const sentinel = `sentinel-${mark}`;
    const arrived = (times: number) => () =>
      sink.since(mark).filter((k) => k === `normal ${NS}/${sentinel}`).length >= times;
    await cluster.backupJobs.create(NS, sentinel).then(async (owner) => {
      await eventually('the sentinel key', arrived(1));
      if (watched === 'cronjobs') await create(CRONJOBS, cronJob(sentinel, owner));
      if (watched === 'jobs')
        await create(JOBS, job(sentinel, { ...CHILD_LABELS, [LABEL_OWNER_NAME]: sentinel }));
    });
    if (watched !== 'backupjobs') await eventually('the child sentinel key', arrived(2));
    await controller.flushed();
    // One change may be several events (a delete: deletionTimestamp set, then gone): distinct keys.
    return [...new Set(sink.since(mark).filter((k) => !k.endsWith(`/${sentinel}`)))];
  }

  test('the initial list enqueues every BackupJob at low priority', () => {
    assert.ok(sink.since(0).includes(`low ${NS}/pre`));
  });

  test("BackupJob: create, spec change, metadata change and foreign status writes enqueue at normal priority; the operator's status writes at low, after settling", async () => {
    const api = cluster.backupJobs;
    assert.deepEqual(await keysFrom(() => api.create(NS, 'x')), [`normal ${NS}/x`]);
    assert.deepEqual(
      await keysFrom(() =>
        api.patchStatus(NS, 'x', { ready: true, message: 'ok', observedGeneration: 1 }, OPERATOR),
      ),
      [`low ${NS}/x`],
    );
    assert.deepEqual(
      await keysFrom(() => api.patchStatus(NS, 'x', { message: 'edited by hand' }, 'kubectl-edit')),
      [`normal ${NS}/x`],
    );
    assert.deepEqual(
      await keysFrom(() => api.patchStatus(NS, 'x', { message: 'ok again' }, OPERATOR)),
      [`low ${NS}/x`],
    );
    assert.deepEqual(await keysFrom(() => api.patch(NS, 'x', { spec: { retentionDays: 9 } })), [
      `normal ${NS}/x`,
    ]);
    assert.deepEqual(
      await keysFrom(() => api.patch(NS, 'x', { metadata: { annotations: { note: 'n' } } })),
      [`normal ${NS}/x`],
    );
  });

  test("CronJob and Job events map to the owning BackupJob; the operator's CronJob writes at low priority, after settling", async () => {
    let owner!: KubeObject;
    await keysFrom(async () => (owner = await cluster.backupJobs.create(NS, 'owner')));
    let cron!: KubeObject;
    assert.deepEqual(
      await keysFrom(
        async () => (cron = await create(CRONJOBS, cronJob('owner-cron', owner))),
        'cronjobs',
      ),
      [`normal ${NS}/owner`],
    );
    const cronPath = objectPath(CRONJOBS, NS, 'owner-cron');
    assert.deepEqual(
      await keysFrom(
        () =>
          cluster.rest.request({
            method: 'PATCH',
            path: `${cronPath}/status`,
            contentType: 'application/merge-patch+json',
            body: { status: { lastScheduleTime: '2026-12-02T02:10:00Z' } },
          }),
        'cronjobs',
      ),
      [`normal ${NS}/owner`],
    );
    // The operator's own writes to its CronJob come back as one verifying add (a run may have
    // decided from a copy older than the write); anyone else's are looked at at once.
    const patchCron = (fieldManager: string, spec: unknown) =>
      cluster.rest.request({
        method: 'PATCH',
        path: cronPath,
        query: { fieldManager },
        contentType: 'application/merge-patch+json',
        body: { spec },
      });
    assert.deepEqual(
      await keysFrom(() => patchCron(OPERATOR, { schedule: '20 2 * * *' }), 'cronjobs'),
      [`low ${NS}/owner`],
    );
    assert.deepEqual(
      await keysFrom(() => patchCron('kubectl-edit', { suspend: true }), 'cronjobs'),
      [`normal ${NS}/owner`],
    );
    // A Job the CronJob started carries the owner label from the jobTemplate.
    assert.deepEqual(
      await keysFrom(
        () =>
          create(
            JOBS,
            job(
              'owner-1',
              { ...CHILD_LABELS, [LABEL_OWNER_NAME]: 'owner' },
              ownerRef('CronJob', 'batch/v1', cron),
            ),
          ),
        'jobs',
      ),
      [`normal ${NS}/owner`],
    );
    // Without the owner label it is traced through its CronJob.
    assert.deepEqual(
      await keysFrom(
        () => create(JOBS, job('owner-2', CHILD_LABELS, ownerRef('CronJob', 'batch/v1', cron))),
        'jobs',
      ),
      [`normal ${NS}/owner`],
    );
    assert.deepEqual(
      await keysFrom(
        () => cluster.rest.request({ method: 'DELETE', path: objectPath(JOBS, NS, 'owner-2') }),
        'jobs',
      ),
      [`normal ${NS}/owner`],
    );
    assert.deepEqual(
      await keysFrom(() => cluster.rest.request({ method: 'DELETE', path: cronPath }), 'cronjobs'),
      [`normal ${NS}/owner`],
    );
  });

  test('children without the operator label are not watched', async () => {
    let owner!: KubeObject;
    await keysFrom(async () => (owner = await cluster.backupJobs.create(NS, 'foreign-owner')));
    const foreign = cronJob('foreign-cron', owner);
    const unlabelled = { ...foreign, metadata: { ...foreign.metadata, labels: { app: 'other' } } };
    assert.deepEqual(await keysFrom(() => create(CRONJOBS, unlabelled), 'cronjobs'), []);
  });

  test('a deleted BackupJob enqueues its key', async () => {
    await keysFrom(() => cluster.backupJobs.create(NS, 'gone'));
    assert.deepEqual(await keysFrom(() => cluster.backupJobs.delete(NS, 'gone')), [
      `normal ${NS}/gone`,
    ]);
  });

  test('reAddAll re-adds every known BackupJob at low priority', async () => {
    await controller.flushed();
    const mark = sink.mark();
    const count = controller.reAddAll();
    await controller.flushed();
    const keys = sink.since(mark);
    assert.equal(keys.length, count);
    assert.ok(keys.every((k) => k.startsWith('low ')));
    assert.ok(keys.includes(`low ${NS}/pre`) && keys.includes(`low ${NS}/x`));
  });
});

describe('KeySource with the real queue on Redis', () => {
  let cluster: KubeCluster;
  let redis: RedisServer;
  before(async () => {
    [cluster, redis] = await Promise.all([startKubeCluster(), startRedisServer()]);
    await cluster.createNamespace(NS);
  });
  after(async () => {
    await Promise.all([cluster.stop(), redis.stop()]);
  });

  const newQueue = (name: string) =>
    new WorkQueue({ name, connection: { url: redis.url }, shards: 4, resetCheckIntervalMs: 200 });

  test('split brain: two controllers enqueueing at once leave each key pending once', async () => {
    const queue = newQueue('split');
    const producerQueue = newQueue('split');
    const first = controllerFor(cluster, queue, { namespaces: [NS] });
    const second = controllerFor(cluster, producerQueue, { namespaces: [NS] });
    try {
      for (let i = 0; i < 10; i++) await cluster.backupJobs.create(NS, `split-${i}`);
      first.start();
      second.start();
      for (let i = 0; i < 10; i++) {
        await cluster.backupJobs.patch(NS, `split-${i}`, { metadata: { labels: { round: '2' } } });
      }
      await eventually('the controllers to sync', () => first.synced && second.synced);
      const keys = await cluster.backupJobs.versions();
      await eventually(`the queue to hold exactly one entry per key (${keys.size})`, async () => {
        await Promise.all([first.flushed(), second.flushed()]);
        return (await queue.len()) === keys.size;
      });
      assert.equal(await queue.len(), keys.size);
    } finally {
      await Promise.all([first.stop(), second.stop()]);
      await Promise.all([queue.close(), producerQueue.close()]);
    }
  });

  test('when Redis loses its data, reAddAll puts every key back', async () => {
    const queue = newQueue('reset');
    const controller = controllerFor(cluster, queue, { namespaces: [NS] });
    queue.on('reset', () => controller.reAddAll());
    try {
      controller.start();
      await eventually('the controller to sync', () => controller.synced);
      const expected = (await cluster.backupJobs.versions()).size;
      await eventually('the initial keys', async () => (await queue.len()) === expected);
      await redis.restartEmpty();
      await eventually(
        'the keys to be added again',
        async () => (await queue.len().catch(() => -1)) === expected,
      );
    } finally {
      await controller.stop();
      await queue.close();
    }
  });
});
