import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { FencedError, isFencedError, WorkQueue } from '#queue';
import { backendKinds, startBackend, type Backend } from '#queue/test/support';
import { eventually } from '#testing';
import { type KubeCluster, startKubeCluster } from '#testing/kube-cluster';
import { KeySource } from '#watch';
import { RedisSnapshotStore, type WorldSnapshot } from '../src/index.js';

const snapshot = (name: string, note: string): WorldSnapshot => ({
  backupJob: { metadata: { name, annotations: { note } } },
  jobs: [],
});

for (const kind of backendKinds) {
  describe(`fenced snapshot writes (${kind} Redis)`, () => {
    let backend: Backend;
    before(async () => {
      backend = await startBackend(kind);
    });
    after(() => backend.stop());

    test("a write of an older term is refused and changes nothing; the newer term's stands", async () => {
      const store = new RedisSnapshotStore(backend.client(), { name: `fence-${kind}`, shards: 4 });
      const keys = ['ns/a', 'ns/b', 'ns/c', 'ns/d', 'ns/e'];
      await store.write(
        keys.map((k) => [k, snapshot(k, 'term 7')]),
        7,
      );
      await assert.rejects(
        store.write(
          keys.map((k) => [k, snapshot(k, 'term 6')]),
          6,
        ),
        (err: Error) => {
          assert.ok(isFencedError(err));
          assert.deepEqual([err.term, err.fence, err.refused], [6, 7, keys.length]);
          return true;
        },
      );
      await assert.rejects(store.write([['ns/a', undefined]], 6), FencedError);
      for (const key of keys) {
        assert.equal((await store.read(key))?.backupJob.metadata.annotations?.note, 'term 7');
      }
      await store.write([['ns/a', snapshot('ns/a', 'term 8')]], 8);
      assert.equal((await store.read('ns/a'))?.backupJob.metadata.annotations?.note, 'term 8');
      const listed: string[] = [];
      for await (const key of store.keys()) listed.push(key);
      assert.deepEqual(listed.sort(), keys);
    });
  });
}

describe('a deposed leader’s controller', () => {
  let cluster: KubeCluster;
  let backend: Backend;
  before(async () => {
    [cluster, backend] = await Promise.all([startKubeCluster(), startBackend('standalone')]);
    await Promise.all([cluster.createNamespace('fenced'), cluster.createNamespace('between')]);
  });
  after(async () => {
    await Promise.all([cluster.stop(), backend.stop()]);
  });

  test('its writes after a newer term raised the fences are refused: it stops and reports them', async () => {
    const location = { name: 'deposed', shards: 4 };
    const queue = new WorkQueue({ ...location, connection: backend.connection });
    const store = new RedisSnapshotStore(backend.client(), location);
    const refusals: FencedError[] = [];
    const old = new KeySource({
      rest: cluster.rest,
      queue,
      snapshots: store,
      namespaces: ['fenced'],
      term: 1,
      settleMs: 20,
      watchdogMs: 1000,
      backoff: { initialMs: 20, maxMs: 200 },
      onFenced: (err) => refusals.push(err),
    });
    try {
      await cluster.backupJobs.create('fenced', 'kept');
      old.start();
      // The key, not its snapshot: a key goes out after its snapshot, so a fence raised between
      // the two would refuse the key this test counts on being queued.
      await eventually('the first key to reach the queue', async () => (await queue.len()) === 1);
      assert.ok(await store.read('fenced/kept'), 'a queued key has its snapshot');
      // A successor starts its term.
      await queue.raiseFence(2);
      const created = await cluster.backupJobs.create('fenced', 'late');
      await eventually('the late write to be refused', () => refusals.length > 0);
      assert.deepEqual([refusals[0]?.term, refusals[0]?.fence], [1, 2]);
      assert.ok((refusals[0]?.refused ?? 0) >= 1);
      assert.equal(
        await store.read('fenced/late'),
        undefined,
        'the refused snapshot was not written',
      );
      assert.equal(await queue.len(), 1, 'only the key added before the newer term is queued');
      assert.equal(old.pendingKeys, 0, 'nothing is left to retry');
      assert.ok(created.metadata.uid);
    } finally {
      await old.stop();
      await queue.close();
    }
  });
  test('a newer term between a key’s snapshot and its add: the add is refused, nothing is left to retry', async () => {
    const location = { name: 'between', shards: 4 };
    const queue = new WorkQueue({ ...location, connection: backend.connection });
    const store = new RedisSnapshotStore(backend.client(), location);
    // Holds every add until the fence is up, so the successor's term starts exactly between a
    // key's snapshot and the key itself.
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    const refusals: FencedError[] = [];
    const old = new KeySource({
      rest: cluster.rest,
      queue: {
        addBulk: async (keys, options) => {
          await gate;
          return queue.addBulk(keys, options);
        },
        raiseFence: (term) => queue.raiseFence(term),
      },
      snapshots: store,
      namespaces: ['between'],
      term: 1,
      settleMs: 20,
      watchdogMs: 1000,
      backoff: { initialMs: 20, maxMs: 200 },
      onFenced: (err) => refusals.push(err),
    });
    try {
      await cluster.backupJobs.create('between', 'caught');
      old.start();
      await eventually(
        'the snapshot to go out',
        async () => (await store.read('between/caught')) !== undefined,
      );
      await queue.raiseFence(2);
      release();
      await eventually('the held add to be refused', () => refusals.length > 0);
      assert.deepEqual([refusals[0]?.term, refusals[0]?.fence], [1, 2]);
      assert.equal(await queue.len(), 0, 'the refused key is not queued');
      assert.equal(old.pendingKeys, 0, 'nothing is left to retry');
    } finally {
      release();
      await old.stop();
      await queue.close();
    }
  });
});
