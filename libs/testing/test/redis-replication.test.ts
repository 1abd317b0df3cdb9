import assert from 'node:assert/strict';
import { test } from 'node:test';
import { onlineReplicaPorts, startRedisCluster, startRedisSentinel } from '../src/index.js';

// A replica reports its link up a moment before its primary puts it online. Tests that pause or
// cut off a replica rely on the queue waiting for it from the first write, so the fixtures return
// only once every primary counts its replicas as online.

test('startRedisSentinel returns once the primary counts every replica as online', async () => {
  for (let i = 0; i < 3; i++) {
    const sentinel = await startRedisSentinel({ replicas: 2 });
    try {
      const [primary, ...replicas] = sentinel.servers;
      const online = await onlineReplicaPorts(primary!.port, {});
      assert.deepEqual(online.sort(), replicas.map((r) => r.port).sort());
    } finally {
      await sentinel.stop();
    }
  }
});

test('startRedisCluster returns once every primary counts its replica as online', async () => {
  const cluster = await startRedisCluster(3, { replicas: 1 });
  try {
    const primaries = (await cluster.topology()).filter((n) => n.primary);
    for (const primary of primaries) {
      assert.equal(
        (await onlineReplicaPorts(primary.port, {})).length,
        1,
        `primary ${primary.port}`,
      );
    }
  } finally {
    await cluster.stop();
  }
});
