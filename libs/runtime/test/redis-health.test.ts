import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { Cluster } from 'ioredis';
import { startRedisCluster, type RedisCluster } from '#testing';
import { redisPingCheck, runHealthCheck } from '../src/index.js';

describe('redisPingCheck on a Redis Cluster', { timeout: 120_000 }, () => {
  let cluster: RedisCluster;
  let client: Cluster;
  before(async () => {
    cluster = await startRedisCluster(3, { replicas: 1 });
    // No periodic slot refresh during the test (an hour away): all the client learns of a
    // failover comes from the check, as for an idle standby between two refreshes.
    client = new Cluster(cluster.nodes, { slotsRefreshInterval: 3_600_000 });
    await client.ping();
  });
  after(async () => {
    client?.disconnect();
    await cluster?.stop();
  });

  test('the first probe after a primary failed over finds the promoted replica and is ready', async () => {
    const check = redisPingCheck(client);
    assert.deepEqual(await runHealthCheck(check).then(withoutTime), {
      up: true,
      details: { primaries: 3 },
    });
    const slot = 0;
    const { killed, promoted } = await cluster.killPrimary(slot, 'failover-force');
    assert.equal(
      client.slots[slot]?.[0],
      `127.0.0.1:${killed}`,
      'the client still maps the slot to the dead primary',
    );

    assert.deepEqual(await runHealthCheck(check).then(withoutTime), {
      up: true,
      details: { primaries: 3 },
    });
    assert.equal(client.slots[slot]?.[0], `127.0.0.1:${promoted}`);
  });
});

function withoutTime<T extends { responseTime: number }>({ responseTime, ...rest }: T) {
  void responseTime;
  return rest;
}
