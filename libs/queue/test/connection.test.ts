import assert from 'node:assert/strict';
import { once, type EventEmitter } from 'node:events';
import type { Socket } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { eventually, startRedisSentinel, withRedis, type RedisSentinel } from '#testing';
import { createRedisClient } from '../src/index.js';

/** The parts of ioredis's Sentinel connector the tests time their faults against. */
interface SentinelConnector {
  connect(...args: unknown[]): Promise<Socket>;
  resolve(...args: unknown[]): Promise<unknown>;
  failoverDetector: { sentinels: { client: EventEmitter }[] } | null;
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
    const connector = (client as unknown as { connector: SentinelConnector }).connector;
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

  test('whose primary is killed ends up writing to the promoted replica, never ending', async () => {
    // A Sentinel deployment of its own: its primary is killed.
    const own = await startRedisSentinel();
    const client = createRedisClient({
      redis: { sentinels: own.sentinels, name: own.masterName },
    });
    client.on('error', () => undefined);
    let ended = false;
    client.on('end', () => (ended = true));
    try {
      await client.set('before', '1');
      // The lost connection's failover detector is subscribed to the Sentinels. Hold every
      // reconnect's question to the Sentinels until that detector either heard the failover's
      // +switch-master or was closed with its connection: a detector still listening then closes
      // the connector under the reconnect, which must not end the client.
      const connector = (client as unknown as { connector: SentinelConnector }).connector;
      const detector = connector.failoverDetector;
      assert.ok(detector, 'the client subscribed to the Sentinels');
      const sentinelClient = detector.sentinels[0]!.client;
      const heardOrClosed = new Promise<void>((done) => {
        sentinelClient.on('message', () => done());
        sentinelClient.once('end', () => done());
      });
      const resolve = connector.resolve.bind(connector);
      connector.resolve = async (...args) => {
        await heardOrClosed;
        return resolve(...args);
      };
      const { promoted } = await own.killPrimary();
      await eventually(
        'a write to succeed again',
        () =>
          client.set('after', '1').then(
            () => true,
            () => false,
          ),
        30_000,
      );
      const role = (await client.call('ROLE')) as unknown[];
      assert.equal(role[0], 'master');
      const [, port] = (await client.call('CONFIG', 'GET', 'port')) as [string, string];
      assert.equal(Number(port), promoted, 'connected to the promoted replica');
      assert.equal(ended, false, 'the client never ended');
    } finally {
      client.disconnect();
      await own.stop();
    }
  });
});
