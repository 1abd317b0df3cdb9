import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { TurnBatch } from '../src/turn-batch.js';

describe('TurnBatch: the calls of one turn answered by one flush', () => {
  test('calls made in one turn share a flush, each gets its own answer in order', async () => {
    const flushes: number[][] = [];
    const batch = new TurnBatch<number, number>(async (inputs) => {
      flushes.push(inputs);
      return inputs.map((n) => n * 10);
    });
    const first = await Promise.all([batch.call(1), batch.call(2), batch.call(3)]);
    assert.deepEqual(first, [10, 20, 30]);
    // Calls made from promise jobs of the same turn join it too.
    const chained = await Promise.all([batch.call(4), Promise.resolve().then(() => batch.call(5))]);
    assert.deepEqual(chained, [40, 50]);
    assert.deepEqual(flushes, [
      [1, 2, 3],
      [4, 5],
    ]);
  });

  test('a call made while a flush is under way waits for a flush of its own', async () => {
    const flushes: number[][] = [];
    let release = () => {};
    const held = new Promise<void>((resolve) => (release = resolve));
    const batch = new TurnBatch<number, number>(async (inputs) => {
      flushes.push(inputs);
      if (inputs[0] === 1) await held;
      return inputs;
    });
    const first = batch.call(1);
    await new Promise((resolve) => setImmediate(resolve));
    const second = batch.call(2);
    release();
    assert.deepEqual(await Promise.all([first, second]), [1, 2]);
    assert.deepEqual(flushes, [[1], [2]]);
  });

  test('a failed flush rejects every call of its turn, and the next turn flushes again', async () => {
    let fail = true;
    const batch = new TurnBatch<number, number>(async (inputs) => {
      if (fail) throw new Error('redis down');
      return inputs;
    });
    const results = await Promise.allSettled([batch.call(1), batch.call(2)]);
    assert.deepEqual(
      results.map((r) => r.status),
      ['rejected', 'rejected'],
    );
    fail = false;
    assert.equal(await batch.call(3), 3);
  });
});
