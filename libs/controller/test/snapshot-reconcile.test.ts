import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { Redis } from 'ioredis';
import type { V1Job } from '@kubernetes/client-node';
import type { KubeObject } from '#kube';
import { Logger } from '#observability';
import { cronJobName } from '#reconciler';
import { shardOf } from '#queue';
import {
  configFingerprint,
  convergedMarksKey,
  decodeMark,
  RedisConvergedMarks,
  worldFingerprint,
  type WorldSnapshot,
} from '#snapshot';
import { stripBackupJob, stripCronJob, stripJob, withoutWriters } from '#watch';
import { RedisSnapshotStore } from '#snapshot';
import { startRedisServer, type RedisServer } from '#testing';
import { createReconcileKey, type ReconcileKey } from '../src/index.js';
import {
  NAMESPACE,
  config,
  converge,
  createBackupJob,
  finishJob,
  getBackupJob,
  getCronJob,
  sample,
  startHarness,
  writesDuring,
  type Harness,
} from './support.js';

/** What the watcher would store for the object as the emulator holds it now. */
const trimmed = (strip: (o: KubeObject) => KubeObject, obj: unknown) =>
  withoutWriters(strip(structuredClone(obj) as KubeObject));

describe('reconciling from the watcher’s snapshots', () => {
  let h: Harness;
  let redis: RedisServer;
  let client: Redis;
  let store: RedisSnapshotStore;
  let fromSnapshots: ReconcileKey;

  const jobsOf = (name: string) =>
    (h.emu.objects.list('batch/v1', 'Job', NAMESPACE) as unknown as V1Job[]).filter((j) =>
      j.metadata?.name?.startsWith(name),
    );
  const snapshotNow = (name: string): WorldSnapshot => {
    const cronJob = getCronJob(h, cronJobName(name));
    return {
      backupJob: trimmed(stripBackupJob, getBackupJob(h, name)),
      ...(cronJob && { cronJob: trimmed(stripCronJob, cronJob) }),
      jobs: jobsOf(name).map((job) => trimmed(stripJob, job)),
    };
  };

  before(async () => {
    [h, redis] = await Promise.all([startHarness(), startRedisServer()]);
    client = new Redis(redis.url);
    store = new RedisSnapshotStore(client, { name: 'test' });
    fromSnapshots = createReconcileKey({
      kubeConfig: h.kc,
      config,
      snapshots: store,
      clock: () => new Date(h.emu.core.clock.now()),
      logger: new Logger({ sink: () => undefined }),
      reportingInstance: 'test-worker',
    });
  });
  after(async () => {
    client.disconnect();
    await Promise.all([h.stop(), redis.stop()]);
  });

  test('a new BackupJob converges from its snapshot with no read', async () => {
    createBackupJob(h, sample('fresh'));
    await store.write([[`${NAMESPACE}/fresh`, snapshotNow('fresh')]]);
    const mark = h.emu.core.log.mark();
    await fromSnapshots(`${NAMESPACE}/fresh`);
    const verbs = h.emu.core.log.entries({ since: mark }).map((r) => `${r.verb} ${r.resource}`);
    assert.deepEqual(verbs.sort(), [
      'create cronjobs',
      'create events',
      'patch backupjobs',
      'patch backupjobs',
    ]);
    assert.equal(getBackupJob(h, 'fresh')?.status?.ready, true);
  });

  test('a missing snapshot means the BackupJob is gone: done, no request', async () => {
    const mark = h.emu.core.log.mark();
    assert.equal(await fromSnapshots(`${NAMESPACE}/never-existed`), undefined);
    assert.deepEqual(h.emu.core.log.entries({ since: mark }), []);
  });

  test('a stale snapshot makes no wrong write: 409 (backoff, not reported), then the right result on the newer one', async () => {
    createBackupJob(h, sample('stale'));
    await converge(h, `${NAMESPACE}/stale`);
    const staleBackupJob = getBackupJob(h, 'stale');
    // Someone labels the BackupJob, then a backup finishes. The watcher has seen the Job but
    // not yet the label: the snapshot's BackupJob is older than the server's.
    h.emu.objects.patch('ops.example.com/v1alpha1', 'BackupJob', 'stale', NAMESPACE, {
      metadata: { labels: { team: 'db' } },
    });
    const template = getCronJob(h, cronJobName('stale'))!.spec!.jobTemplate;
    const finishedAt = new Date(h.emu.core.clock.now() - 1000);
    finishJob(h, template, 'stale-backup-1', 'succeeded', finishedAt);
    await store.write([
      [
        `${NAMESPACE}/stale`,
        { ...snapshotNow('stale'), backupJob: trimmed(stripBackupJob, staleBackupJob) },
      ],
    ]);

    const mark = h.emu.core.log.mark();
    await assert.rejects(fromSnapshots(`${NAMESPACE}/stale`), /^ReconcileError: Conflict/);
    const attempts = h.emu.core.log.entries({ since: mark });
    assert.deepEqual(
      attempts.map((r) => `${r.verb} ${r.resource}/${r.subresource ?? ''} ${r.code}`),
      ['patch backupjobs/status 409'],
    );
    const untouched = getBackupJob(h, 'stale');
    assert.equal(untouched?.status?.lastBackupTime, staleBackupJob?.status?.lastBackupTime);
    assert.equal(untouched?.metadata.labels?.team, 'db');

    await store.write([[`${NAMESPACE}/stale`, snapshotNow('stale')]]);
    const writes = await writesDuring(h.emu, () => fromSnapshots(`${NAMESPACE}/stale`));
    assert.ok(writes.includes('patch backupjobs/status'), writes.join(', '));
    const after = getBackupJob(h, 'stale');
    assert.equal(after?.status?.lastBackupTime, finishedAt.toISOString());
    assert.equal(after?.metadata.labels?.team, 'db');
  });

  test('a CronJob the snapshot lacks but the API server has is read once, never overwritten', async () => {
    // A CronJob of the desired name that is not the operator's: its watches never see it.
    createBackupJob(h, sample('taken'));
    h.emu.objects.create({
      apiVersion: 'batch/v1',
      kind: 'CronJob',
      metadata: { name: cronJobName('taken'), namespace: NAMESPACE },
      spec: {
        schedule: '@yearly',
        jobTemplate: {
          spec: {
            template: {
              spec: { restartPolicy: 'OnFailure', containers: [{ name: 'x', image: 'x' }] },
            },
          },
        },
      },
    } as never);
    await store.write([
      [
        `${NAMESPACE}/taken`,
        { backupJob: trimmed(stripBackupJob, getBackupJob(h, 'taken')), jobs: [] },
      ],
    ]);
    await fromSnapshots(`${NAMESPACE}/taken`).catch(() => undefined);
    assert.equal(getCronJob(h, cronJobName('taken'))?.spec?.schedule, '@yearly');
    const ready = getBackupJob(h, 'taken')?.status?.conditions?.find((c) => c.type === 'Ready');
    assert.equal(ready?.reason, 'CronJobConflict');
  });

  test('a run from a snapshot that wrote nothing records the key converged until its RequeueAfter; a run that wrote, or one that asked about grants, does not', async () => {
    const marks = new RedisConvergedMarks(client, { name: 'test' });
    const at = h.emu.core.clock.now();
    const marking = createReconcileKey({
      kubeConfig: h.kc,
      config,
      snapshots: store,
      converged: marks,
      clock: () => new Date(at),
      logger: new Logger({ sink: () => undefined }),
      reportingInstance: 'test-worker',
    });
    const markOf = async (name: string) => {
      // Sent before the run returned, on this connection: a PING after it answers once it landed.
      await client.ping();
      const text = await client.hget(
        convergedMarksKey('wq', 'test', shardOf(`${NAMESPACE}/${name}`, 16)),
        `${NAMESPACE}/${name}`,
      );
      return text === null ? undefined : decodeMark(text);
    };
    for (const spec of [{}, { secretRef: { name: 'marked-credentials' } }]) {
      const name = 'secretRef' in spec ? 'marked-granted' : 'marked';
      createBackupJob(h, sample(name, spec));
      await store.write([[`${NAMESPACE}/${name}`, snapshotNow(name)]]);
      const first = await writesDuring(h.emu, () => marking(`${NAMESPACE}/${name}`));
      assert.notDeepEqual(first, [], `${name}: the first run writes`);
      assert.equal(await markOf(name), undefined, `${name}: a run that wrote proves nothing`);
      const snapshot = snapshotNow(name);
      await store.write([[`${NAMESPACE}/${name}`, snapshot]]);
      let result: unknown;
      const second = await writesDuring(h.emu, async () => {
        result = await marking(`${NAMESPACE}/${name}`);
      });
      assert.deepEqual(second, [], `${name}: the second run writes nothing`);
      const mark = await markOf(name);
      if (name === 'marked-granted') {
        assert.equal(mark, undefined, 'a world with grants is never proven');
        continue;
      }
      const requeueAfter = (result as { requeueAfter: number }).requeueAfter;
      assert.deepEqual(mark, {
        fingerprint: worldFingerprint(snapshot),
        config: configFingerprint(config),
        until: at + requeueAfter,
      });
    }
  });
});
