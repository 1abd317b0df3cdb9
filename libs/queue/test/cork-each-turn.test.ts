import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { Cluster, type Redis } from 'ioredis';
import {
  eventually,
  startRedisCluster,
  startRedisServer,
  type RedisCluster,
  type RedisServer,
} from '#testing';
import { createRedisClient } from '../src/index.js';

const COMMANDS = 100;

/** Read events the server processed so far: one per time it found bytes on a connection. */
async function readsProcessed(node: Redis): Promise<number> {
  const info = String(await node.call('INFO', 'stats'));
  return Number(/total_reads_processed:(\d+)/.exec(info)?.[1]);
}

/**
 * Waits until the connection is the server's only one: a helper's connection that closed is a
 * read too, counted whenever the server gets to it.
 */
async function alone(node: Redis): Promise<void> {
  await eventually('no other connection on the server', async () => {
    const list = String(await node.call('CLIENT', 'LIST'));
    return list.trim().split('\n').length === 1;
  });
}

/**
 * Issues COMMANDS writes to one hash slot in one turn of the event loop and returns how many reads
 * the server serving the slot needed for them, with their replies. The server's only other
 * traffic is the INFO that reads the counter afterwards (one read).
 */
async function batch(client: Redis, node: Redis, tag: string) {
  await alone(node);
  const before = await readsProcessed(node);
  const replies = await Promise.all(
    Array.from({ length: COMMANDS }, (_, i) => client.call('SET', `{${tag}}:${i}`, String(i))),
  );
  const reads = (await readsProcessed(node)) - before - 1;
  const values = await client.call(
    'MGET',
    ...Array.from({ length: COMMANDS }, (_, i) => `{${tag}}:${i}`),
  );
  return { reads, replies, values };
}

const expected = Array.from({ length: COMMANDS }, (_, i) => String(i));

describe('a connection corked each turn', () => {
  let server: RedisServer;
  before(async () => {
    server = await startRedisServer();
  });
  after(async () => {
    await server?.stop();
  });

  test('commands issued in one turn reach the server in one read, replies in order', async () => {
    const client = createRedisClient({ url: server.url }) as Redis;
    try {
      await client.ping();
      const { reads, replies, values } = await batch(client, client, 'a');
      assert.deepEqual(replies, Array(COMMANDS).fill('OK'));
      assert.deepEqual(values, expected);
      assert.equal(reads, 1, `${COMMANDS} commands took ${reads} reads`);
    } finally {
      client.disconnect();
    }
  });

  test('a connection made after a restart is corked too', async () => {
    const client = createRedisClient({ url: server.url }) as Redis;
    client.on('error', () => undefined);
    try {
      await client.ping();
      const first = client.stream;
      await server.restartEmpty();
      await eventually('the client to reconnect', async () => {
        try {
          return (await client.ping()) === 'PONG' && client.stream !== first;
        } catch {
          return false;
        }
      });
      const { reads, values } = await batch(client, client, 'b');
      assert.deepEqual(values, expected);
      assert.equal(reads, 1, `${COMMANDS} commands took ${reads} reads after the reconnect`);
    } finally {
      client.disconnect();
    }
  });
});

describe('Cluster connections corked each turn', () => {
  let cluster: RedisCluster;
  before(async () => {
    cluster = await startRedisCluster(3);
  });
  after(async () => {
    await cluster?.stop();
  });

  test("each node's commands of one turn reach it in one read", async () => {
    // No periodic slot refresh: its CLUSTER SLOTS would be another read on some node.
    const client = createRedisClient({
      cluster: { nodes: cluster.nodes, options: { slotsRefreshInterval: 0 } },
    });
    assert.ok(client instanceof Cluster, 'a Cluster client');
    try {
      await client.ping();
      for (const tag of ['a', 'b', 'c']) {
        // Asked of the client itself, so that no helper connection comes and goes meanwhile.
        const slot: number = Number(await client.call('CLUSTER', 'KEYSLOT', `{${tag}}`));
        const primary: string | undefined = client.slots[slot]?.[0];
        const node = client
          .nodes('master')
          .find((n) => `${n.options.host}:${n.options.port}` === primary);
        assert.ok(node, `the client knows the primary of slot ${slot}`);
        const { reads, values } = await batch(client as unknown as Redis, node, tag);
        assert.deepEqual(values, expected);
        assert.equal(reads, 1, `${COMMANDS} commands to ${primary} took ${reads} reads`);
      }
    } finally {
      client.disconnect();
    }
  });
});
