import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { Redis } from 'ioredis';
import { NotReplicatedError, WorkQueue } from '#queue';
import { queueOptions, startBackend, type Backend } from '#queue/test/support';
import { RedisSnapshotStore, type WorldSnapshot } from '#snapshot';
import { confirmedSnapshotWriter } from '../src/snapshot-writer.js';

const KEY = 'ns/a';

describe('snapshot writes on a primary with a replica (Sentinel)', { timeout: 120_000 }, () => {
  let backend: Backend;
  let queue: WorkQueue;
  before(async () => {
    backend = await startBackend('sentinel');
    queue = new WorkQueue(queueOptions(backend));
  });
  after(async () => {
    await queue?.close();
    await backend?.stop();
  });

  test('a snapshot counts as written only once the replica holds it', async () => {
    const store = new RedisSnapshotStore(queue.client, { name: queue.name });
    let note = 'first';
    const snapshotOf = (key: string): WorldSnapshot => ({
      backupJob: { metadata: { name: key, annotations: { note } } },
      jobs: [],
    });
    const writer = confirmedSnapshotWriter(store, queue, snapshotOf);
    // The queue learns the replicas of the primary as it adds.
    await queue.add(KEY);
    await writer.write([KEY]);

    const replica = backend.sentinel!.servers[1]!;
    note = 'second';
    replica.pause();
    try {
      // Acknowledged by the primary, but a failover now would bring back the first.
      await assert.rejects(writer.write([KEY]), NotReplicatedError);
    } finally {
      replica.resume();
    }
    await writer.write([KEY]);
    const onReplica = new Redis({ port: replica.port, lazyConnect: true });
    try {
      const text = await onReplica.get(store.redisKey(KEY));
      assert.equal(
        (JSON.parse(text ?? 'null') as WorldSnapshot).backupJob.metadata?.annotations?.note,
        'second',
      );
    } finally {
      onReplica.disconnect();
    }
  });
});
