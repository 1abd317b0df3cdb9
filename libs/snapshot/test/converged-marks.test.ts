import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { Redis } from 'ioredis';
import { MANAGED_BY_VALUE } from '#api';
import { eventually, type RedisServer, startRedisServer } from '#testing';
import { type KubeCluster, startKubeCluster } from '#testing/kube-cluster';
import { KeySource, type KeySink } from '#watch';
import { shardOf } from '#queue';
import {
  convergedMarksKey,
  decodeMark,
  encodeMark,
  RedisConvergedMarks,
  RedisSnapshotStore,
  worldFingerprint,
  type WorldSnapshot,
} from '../src/index.js';

const NS = 'ops';
const CONFIG = 'config-a';
const NOW = 1_000_000;

const world = (bj: string, cj?: string, jobs: string[] = []): WorldSnapshot => ({
  backupJob: { metadata: { name: 'a', resourceVersion: bj } },
  ...(cj !== undefined && { cronJob: { metadata: { name: 'a', resourceVersion: cj } } }),
  jobs: jobs.map((rv) => ({ metadata: { name: `j${rv}`, resourceVersion: rv } })),
});

test('a fingerprint changes with any object of the world, and not with the order of its Jobs', () => {
  const base = worldFingerprint(world('1', '2', ['3', '4']));
  assert.equal(worldFingerprint(world('1', '2', ['4', '3'])), base);
  for (const other of [
    world('9', '2', ['3', '4']),
    world('1', '9', ['3', '4']),
    world('1', undefined, ['3', '4']),
    world('1', '2', ['3']),
    world('1', '2', ['3', '4', '5']),
  ]) {
    assert.notEqual(worldFingerprint(other), base);
  }
});

test('a mark reads back as written; text that is no mark reads as none', () => {
  const mark = { fingerprint: '1/2/3,4', config: CONFIG, until: NOW };
  assert.deepEqual(decodeMark(encodeMark(mark)), mark);
  for (const text of ['', 'x config fp', '5 config', '5 config fp extra']) {
    assert.equal(decodeMark(text), undefined, text);
  }
});

describe('converged marks in Redis', () => {
  let redis: RedisServer;
  let client: Redis;
  let marks: RedisConvergedMarks;
  let store: RedisSnapshotStore;

  before(async () => {
    redis = await startRedisServer();
    client = new Redis(redis.url);
    marks = new RedisConvergedMarks(client, { name: 'test' });
    store = new RedisSnapshotStore(client, { name: 'test' });
  });
  after(async () => {
    client.disconnect();
    await redis.stop();
  });

  test('only a key whose mark has its fingerprint, the current configuration and a future due time is converged', async () => {
    const fp = worldFingerprint(world('1', '2'));
    await marks.record(`${NS}/same`, { fingerprint: fp, config: CONFIG, until: NOW + 1 });
    await marks.record(`${NS}/changed`, { fingerprint: fp, config: CONFIG, until: NOW + 1 });
    await marks.record(`${NS}/due`, { fingerprint: fp, config: CONFIG, until: NOW });
    await marks.record(`${NS}/old-config`, { fingerprint: fp, config: 'config-b', until: NOW + 1 });
    await marks.publishConfig(CONFIG);
    const garbled = `${NS}/garbled`;
    await client.hset(convergedMarksKey('wq', 'test', shardOf(garbled, 16)), garbled, 'not a mark');
    const asked = (['same', 'due', 'old-config', 'unmarked', 'garbled'] as const).map(
      (name) => [`${NS}/${name}`, fp] as const,
    );
    const converged = await marks.converged(
      [...asked, [`${NS}/changed`, worldFingerprint(world('1', '5'))]],
      NOW,
    );
    assert.deepEqual([...converged], [`${NS}/same`]);
  });

  test('marks made under a configuration the workers no longer run prove nothing', async () => {
    const fp = worldFingerprint(world('7'));
    await marks.record(`${NS}/before-rollout`, { fingerprint: fp, config: CONFIG, until: NOW + 1 });
    assert.equal((await marks.converged([[`${NS}/before-rollout`, fp]], NOW)).size, 1);
    await marks.publishConfig('config-b');
    assert.equal((await marks.converged([[`${NS}/before-rollout`, fp]], NOW)).size, 0);
    await client.del('wq:test:reconciler-config');
    await marks.record(`${NS}/before-rollout`, { fingerprint: fp, config: CONFIG, until: NOW + 1 });
    assert.equal(await client.get('wq:test:reconciler-config'), CONFIG, 'a mark publishes');
  });

  test('a deleted snapshot takes its mark along, fenced or not', async () => {
    const fp = worldFingerprint(world('8'));
    for (const [name, term] of [
      ['fenced', 3],
      ['unfenced', undefined],
    ] as const) {
      const key = `${NS}/${name}`;
      await store.write([[key, world('8')]], term);
      await marks.record(key, { fingerprint: fp, config: CONFIG, until: NOW + 1 });
      assert.equal((await marks.converged([[key, fp]], NOW)).size, 1);
      await store.write([[key, undefined]], term);
      assert.equal((await marks.converged([[key, fp]], NOW)).size, 0, name);
    }
  });
});

describe('a resync skips the keys the workers proved converged', () => {
  let cluster: KubeCluster;
  let redis: RedisServer;
  let client: Redis;
  let store: RedisSnapshotStore;
  let marks: RedisConvergedMarks;
  let controller: KeySource;
  const sent: string[] = [];
  let skipped = 0;

  before(async () => {
    [cluster, redis] = await Promise.all([startKubeCluster(), startRedisServer()]);
    client = new Redis(redis.url);
    store = new RedisSnapshotStore(client, { name: 'test' });
    marks = new RedisConvergedMarks(client, { name: 'test' });
    const sink: KeySink = {
      addBulk: async (keys) => void sent.push(...keys),
    };
    for (const name of ['proven', 'stale-mark', 'unmarked']) {
      await cluster.backupJobs.create(NS, name);
    }
    controller = new KeySource({
      rest: cluster.rest,
      queue: sink,
      snapshots: store,
      converged: marks,
      onConvergedSkipped: (keys) => (skipped += keys),
      namespaces: [NS],
      fieldManager: MANAGED_BY_VALUE,
      settleMs: 50,
    });
    controller.start();
    await eventually('the initial list to be sent', () => sent.length === 3);
    await controller.flushed();
  });
  after(async () => {
    await controller.stop();
    client.disconnect();
    await Promise.all([cluster.stop(), redis.stop()]);
  });

  test('a key whose mark matches the snapshot a worker read is not sent; the others are', async () => {
    // What a worker does after a run that wrote nothing: fingerprint the snapshot it read.
    const markFrom = async (name: string, config: string) => {
      const snapshot = await store.read(`${NS}/${name}`);
      assert.ok(snapshot, name);
      const until = Date.now() + 60_000;
      await marks.record(`${NS}/${name}`, {
        fingerprint: worldFingerprint(snapshot),
        config,
        until,
      });
    };
    await markFrom('stale-mark', CONFIG);
    await cluster.backupJobs.patch(NS, 'stale-mark', { spec: { retentionDays: 9 } });
    await eventually('the change to be sent', () => sent.length === 4);
    await markFrom('proven', CONFIG);
    await marks.publishConfig(CONFIG);
    await controller.flushed();

    sent.length = 0;
    controller.backupJobs.resync();
    await controller.flushed();
    assert.deepEqual(sent.sort(), [`${NS}/stale-mark`, `${NS}/unmarked`]);
    assert.equal(skipped, 1);

    // Workers that run another configuration: the mark no longer counts.
    await marks.publishConfig('config-b');
    sent.length = 0;
    controller.backupJobs.resync();
    await controller.flushed();
    assert.deepEqual(sent.sort(), [`${NS}/proven`, `${NS}/stale-mark`, `${NS}/unmarked`]);
  });
});
