import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Backoff } from '../src/backoff.js';

test('backoff doubles from 800 ms to the 30 s cap and starts over after reset', () => {
  const backoff = new Backoff({}, () => 0);
  const delays = Array.from({ length: 8 }, () => backoff.next());
  assert.deepEqual(delays, [800, 1600, 3200, 6400, 12_800, 25_600, 30_000, 30_000]);
  backoff.reset();
  assert.equal(backoff.next(), 800);
});

test('jitter adds up to its fraction of each delay', () => {
  const backoff = new Backoff({ initialMs: 1000, maxMs: 10_000, jitter: 0.2 }, () => 0.5);
  assert.deepEqual([backoff.next(), backoff.next()], [1100, 2200]);
});

test('jitter never pushes a delay past the cap', () => {
  const backoff = new Backoff({ initialMs: 1000, maxMs: 1100, jitter: 0.2 }, () => 0.999);
  assert.deepEqual([backoff.next(), backoff.next()], [1100, 1100]);
});

test('a failure long after the previous one starts over from the first delay (client-go resetDuration)', () => {
  let now = 0;
  const backoff = new Backoff(
    { initialMs: 100, maxMs: 10_000, jitter: 0, resetAfterMs: 5000 },
    () => 0,
    () => now,
  );
  assert.deepEqual([backoff.next(), backoff.next(), backoff.next()], [100, 200, 400]);
  now += 4999;
  assert.equal(backoff.next(), 800);
  now += 5000;
  assert.equal(backoff.next(), 100);
});

test('a delay the server asked for is used as it is, capped and jittered, and does not grow the backoff', () => {
  const backoff = new Backoff({ initialMs: 100, maxMs: 2000, jitter: 0.5 }, () => 0.5);
  assert.equal(backoff.next(), 125);
  assert.deepEqual(
    [backoff.after(1000), backoff.after(1000), backoff.after(5000)],
    [1250, 1250, 2000],
  );
  assert.equal(backoff.next(), 250);
});
