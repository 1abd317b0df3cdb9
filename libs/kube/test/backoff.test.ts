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
