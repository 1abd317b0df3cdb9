import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { Logger } from '#observability';
import { HealthRegistry, ShutdownCoordinator, redisPingCheck } from '../src/index.js';

function quietLogger() {
  const lines: Record<string, unknown>[] = [];
  return { lines, logger: new Logger({ sink: (l) => lines.push(JSON.parse(l)) }) };
}

describe('ShutdownCoordinator', () => {
  test('runs phases in order: stop-intake, drain, release, close; hooks of a phase together', async () => {
    const { logger } = quietLogger();
    const coordinator = new ShutdownCoordinator(5000, logger);
    const order: string[] = [];
    const hook =
      (name: string, ms = 0) =>
      async () => {
        order.push(`start ${name}`);
        await new Promise((r) => setTimeout(r, ms));
        order.push(`end ${name}`);
      };
    coordinator.onShutdown('close', 'redis', hook('redis'));
    coordinator.onShutdown('release', 'lease', hook('lease'));
    coordinator.onShutdown('drain', 'reconciles', hook('reconciles', 20));
    coordinator.onShutdown('drain', 'informers', hook('informers'));
    coordinator.onShutdown('stop-intake', 'consumer', hook('consumer'));
    assert.equal(coordinator.shuttingDown, false);
    const result = await coordinator.shutdown('SIGTERM');
    assert.deepEqual(result.unfinished, []);
    assert.deepEqual(order, [
      'start consumer',
      'end consumer',
      'start reconciles',
      'start informers',
      'end informers',
      'end reconciles',
      'start lease',
      'end lease',
      'start redis',
      'end redis',
    ]);
  });

  test('a second call waits for the same shutdown; readiness turns false at once', async () => {
    const { logger } = quietLogger();
    const coordinator = new ShutdownCoordinator(5000, logger);
    const health = new HealthRegistry();
    coordinator.registerReadiness(health);
    const [check] = health.checks('readiness');
    assert.equal(await check!.check(new AbortController().signal), undefined);
    let runs = 0;
    coordinator.onShutdown('drain', 'count', () => {
      runs++;
    });
    const first = coordinator.shutdown('SIGTERM');
    assert.equal(coordinator.shuttingDown, true);
    assert.throws(() => check!.check(new AbortController().signal), /shutting down/);
    assert.equal(coordinator.shutdown('SIGINT'), first);
    await first;
    assert.equal(runs, 1);
  });

  test('past the grace period the signal aborts, later phases still run, the stuck hook is named', async () => {
    const { logger, lines } = quietLogger();
    const coordinator = new ShutdownCoordinator(100, logger);
    let aborted = false;
    let released = false;
    coordinator.onShutdown('drain', 'stuck', (signal) => {
      signal.addEventListener('abort', () => (aborted = true));
      return new Promise(() => undefined);
    });
    coordinator.onShutdown('release', 'lease', () => {
      released = true;
    });
    coordinator.onShutdown('close', 'broken', () => {
      throw new Error('close failed');
    });
    const result = await coordinator.shutdown('SIGTERM');
    assert.equal(aborted, true);
    assert.equal(released, true);
    assert.deepEqual(result.unfinished, ['drain:stuck', 'close:broken']);
    assert.ok(lines.some((l) => l.msg === 'shutdown hook failed' && l.hook === 'broken'));
    assert.ok(lines.some((l) => l.msg === 'shutdown incomplete'));
  });

  test('a removed hook does not run', async () => {
    const { logger } = quietLogger();
    const coordinator = new ShutdownCoordinator(1000, logger);
    let ran = false;
    const remove = coordinator.onShutdown('drain', 'gone', () => {
      ran = true;
    });
    remove();
    await coordinator.shutdown('test');
    assert.equal(ran, false);
  });
});

describe('HealthRegistry', () => {
  test('checks are readiness-only unless they say otherwise; names are unique; removal works', () => {
    const health = new HealthRegistry();
    const remove = health.register({ name: 'redis', check: () => undefined });
    health.register({ name: 'loop', probes: ['liveness', 'readiness'], check: () => undefined });
    assert.deepEqual(
      health.checks('readiness').map((c) => c.name),
      ['redis', 'loop'],
    );
    assert.deepEqual(
      health.checks('liveness').map((c) => c.name),
      ['loop'],
    );
    assert.throws(
      () => health.register({ name: 'redis', check: () => undefined }),
      /already registered/,
    );
    remove();
    assert.deepEqual(
      health.checks('readiness').map((c) => c.name),
      ['loop'],
    );
  });

  test('redisPingCheck is down while the connection is not ready, else it pings', async () => {
    const signal = new AbortController().signal;
    let pings = 0;
    const redis = { status: 'reconnecting', ping: async () => void pings++ };
    const check = redisPingCheck(redis);
    await assert.rejects(async () => check.check(signal), /redis connection is reconnecting/);
    assert.equal(pings, 0);
    redis.status = 'ready';
    await check.check(signal);
    assert.equal(pings, 1);
  });
});
