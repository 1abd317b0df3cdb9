import assert from 'node:assert/strict';
import { once } from 'node:events';
import type { Socket } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { eventually, startRedisSentinel, withRedis, type RedisSentinel } from '#testing';
import { createRedisClient } from '../src/index.js';

/** The part of ioredis's Sentinel connector the test times its close against. */
interface Connector {
  connect(...args: unknown[]): Promise<Socket>;
}

/** Clients of a Sentinel subscribed to a channel (ioredis's failover detector listens there). */
async function subscribers(port: number): Promise<number> {
  const list = await withRedis({ port, enableReadyCheck: false }, (c) => c.call('CLIENT', 'LIST'));
  return String(list)
    .split('\n')
    .filter((line) => / sub=[1-9]/.test(line)).length;
}

describe('a Sentinel client', () => {
  let sentinel: RedisSentinel;
  before(async () => {
    sentinel = await startRedisSentinel();
  });
  after(async () => {
    await sentinel?.stop();
  });

  test('closed while it connects to the primary leaves no subscription on the Sentinels', async () => {
    const client = createRedisClient(
      { redis: { sentinels: sentinel.sentinels, name: sentinel.masterName } },
      { lazyConnect: true },
    );
    client.on('error', () => undefined);
    // A shutdown that lands while a reconnect is under way: the Sentinels named the primary and
    // the socket to it is open but not yet connected. Once it connects, ioredis subscribes to
    // the Sentinels' +switch-master; a subscription left behind keeps the process from exiting.
    const connector = (client as unknown as { connector: Connector }).connector;
    const connect = connector.connect.bind(connector);
    let closedWhileConnecting = false;
    connector.connect = async (...args) => {
      const stream = await connect(...args);
      closedWhileConnecting = stream.connecting;
      client.disconnect();
      return stream;
    };
    const subscribed = once(client, 'failoverSubscribed');
    await client.connect().catch(() => undefined);
    assert.ok(closedWhileConnecting, 'the client was closed before its socket connected');
    await subscribed;
    await eventually('the client to end', () => client.status === 'end', 10_000);
    await eventually(
      'no subscription left on the Sentinel',
      async () => (await subscribers(sentinel.sentinels[0]!.port)) === 0,
      10_000,
    );
  });
});
