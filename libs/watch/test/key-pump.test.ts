import { test } from 'node:test';
import assert from 'node:assert/strict';
import { KeyPump, type KeySink } from '../src/key-pump.js';

type Call = { keys: string[]; priority: string };

/** A sink that fails its first `failures` calls, as Redis does while it is down. */
function sink(failures = 0): KeySink & { calls: Call[]; attempts: number } {
  const state = {
    calls: [] as Call[],
    attempts: 0,
    async addBulk(keys: Iterable<string>, options: { priority?: string } = {}) {
      state.attempts++;
      if (state.attempts <= failures) throw new Error('connection refused');
      state.calls.push({ keys: [...keys], priority: options.priority ?? 'low' });
    },
  };
  return state;
}

test('keys whose send failed are kept and sent once the sink recovers', async () => {
  const target = sink(3);
  const pump = new KeyPump({ sink: target, backoff: { initialMs: 1, maxMs: 5 } });
  pump.start();
  pump.add('ns/a');
  pump.addLow('ns/b');
  await pump.whenIdle();
  pump.stop();
  assert.equal(target.attempts > 3, true);
  assert.deepEqual(target.calls.flatMap((c) => c.keys.map((k) => `${c.priority} ${k}`)).sort(), [
    'low ns/b',
    'normal ns/a',
  ]);
});

test('a burst for one key becomes one add; normal keys go before low ones; normal wins over low', async () => {
  const target = sink();
  const pump = new KeyPump({ sink: target });
  for (let i = 0; i < 100; i++) pump.add('ns/hot');
  pump.addLow('ns/cold');
  pump.addLow('ns/hot');
  pump.addLow('ns/both');
  pump.add('ns/both');
  pump.start();
  await pump.whenIdle();
  pump.stop();
  assert.deepEqual(target.calls, [
    { keys: ['ns/hot', 'ns/both'], priority: 'normal' },
    { keys: ['ns/cold'], priority: 'low' },
  ]);
});

test('after stop nothing more is sent', async () => {
  const target = sink();
  const pump = new KeyPump({ sink: target });
  pump.start();
  pump.stop();
  pump.add('ns/late');
  await pump.whenIdle();
  assert.deepEqual(target.calls, []);
  assert.equal(pump.pending, 0);
});

test('batches respect the batch size', async () => {
  const target = sink();
  const pump = new KeyPump({ sink: target, batchSize: 2 });
  for (const k of ['a', 'b', 'c', 'd', 'e']) pump.addLow(`ns/${k}`);
  pump.start();
  await pump.whenIdle();
  pump.stop();
  assert.deepEqual(
    target.calls.map((c) => c.keys.length),
    [2, 2, 1],
  );
});

test('settling keys: a burst of settles for one key becomes one low add, with its snapshot written first', async () => {
  const target = sink();
  const written: string[][] = [];
  const pump = new KeyPump({
    sink: target,
    settleMs: 5,
    snapshots: { write: async (keys) => void written.push([...keys]) },
  });
  pump.start();
  for (let i = 0; i < 10; i++) pump.settle('ns/echo');
  await pump.whenIdle();
  pump.stop();
  assert.deepEqual(target.calls, [{ keys: ['ns/echo'], priority: 'low' }]);
  assert.ok(written.flat().includes('ns/echo'), 'the snapshot was rewritten');
});

test('a normal add of a settling key sends it once at normal priority and ends its settling', async () => {
  const target = sink();
  const pump = new KeyPump({ sink: target, settleMs: 60_000 });
  pump.start();
  pump.settle('ns/a');
  pump.add('ns/a');
  await pump.whenIdle();
  pump.stop();
  assert.deepEqual(target.calls, [{ keys: ['ns/a'], priority: 'normal' }]);
});

test('a settle of a key already waiting to be sent adds nothing; stop drops settling keys', async () => {
  const target = sink();
  const pump = new KeyPump({ sink: target, settleMs: 60_000 });
  pump.addLow('ns/waiting');
  pump.settle('ns/waiting');
  pump.settle('ns/settling');
  assert.equal(pump.pending, 2);
  pump.start();
  await new Promise((resolve) => setImmediate(resolve));
  pump.stop();
  await pump.whenIdle();
  assert.deepEqual(target.calls, [{ keys: ['ns/waiting'], priority: 'low' }]);
  assert.equal(pump.pending, 0);
});

test('rechecked keys: those proven converged are dropped, the rest go at low priority after every other key', async () => {
  const target = sink();
  const asked: string[][] = [];
  const pump = new KeyPump({
    sink: target,
    converged: async (keys) => {
      asked.push([...keys]);
      return new Set(keys.filter((k) => k === 'ns/proven'));
    },
  });
  pump.recheck('ns/proven');
  pump.recheck('ns/unproven');
  pump.recheck('ns/waiting');
  pump.addLow('ns/waiting');
  pump.add('ns/changed');
  pump.recheck('ns/changed');
  pump.start();
  await pump.whenIdle();
  pump.stop();
  assert.deepEqual(asked, [['ns/proven', 'ns/unproven']]);
  assert.deepEqual(target.calls, [
    { keys: ['ns/changed'], priority: 'normal' },
    { keys: ['ns/waiting'], priority: 'low' },
    { keys: ['ns/unproven'], priority: 'low' },
  ]);
});

test('rechecked keys are all sent when the check fails', async () => {
  const target = sink();
  const pump = new KeyPump({
    sink: target,
    converged: () => Promise.reject(new Error('connection refused')),
  });
  pump.recheck('ns/a');
  pump.recheck('ns/b');
  pump.start();
  await pump.whenIdle();
  pump.stop();
  assert.deepEqual(target.calls, [{ keys: ['ns/a', 'ns/b'], priority: 'low' }]);
});

test('a rechecked key that begins settling during its check is sent once, when it settled', async () => {
  const target = sink();
  const pump: KeyPump = new KeyPump({
    sink: target,
    settleMs: 5,
    converged: async () => {
      pump.settle('ns/echo');
      return new Set();
    },
  });
  pump.recheck('ns/echo');
  pump.start();
  await pump.whenIdle();
  pump.stop();
  assert.deepEqual(target.calls, [{ keys: ['ns/echo'], priority: 'low' }]);
});
