import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { setImmediate as yieldToLoop } from 'node:timers/promises';
import { eventually } from '#testing';
import { Logger } from '#observability';
import { IdleGc, idleGcDefaults, inspectorFullGc, shouldCollect } from '../src/idle-gc.js';

const MiB = 1024 * 1024;

describe('shouldCollect', () => {
  const policy = idleGcDefaults;
  const live = 200 * MiB;

  test('a quiet process whose heap grew by half its live size and at least the minimum collects', () => {
    assert.equal(
      shouldCollect({ heapUsed: live * 1.5, liveAfterLastGc: live, utilization: 0.01 }, policy),
      true,
    );
  });

  test('a busy process is left to V8, however much garbage it holds', () => {
    assert.equal(
      shouldCollect({ heapUsed: live * 3, liveAfterLastGc: live, utilization: 0.2 }, policy),
      false,
    );
  });

  test('growth under half a large live heap is not worth a full collection', () => {
    assert.equal(
      shouldCollect({ heapUsed: live * 1.4, liveAfterLastGc: live, utilization: 0 }, policy),
      false,
    );
  });

  test('a small heap must still grow by the minimum', () => {
    const small = 10 * MiB;
    assert.equal(
      shouldCollect(
        { heapUsed: small + policy.minGrowthBytes - 1, liveAfterLastGc: small, utilization: 0 },
        policy,
      ),
      false,
    );
    assert.equal(
      shouldCollect(
        { heapUsed: small + policy.minGrowthBytes, liveAfterLastGc: small, utilization: 0 },
        policy,
      ),
      true,
    );
  });
});

describe('IdleGc', () => {
  test('once the process is quiet, the garbage a burst left in the old generation is collected', async () => {
    const lines: Record<string, unknown>[] = [];
    const log = new Logger({
      sink: (line) => lines.push(JSON.parse(line) as Record<string, unknown>),
    });
    const idle = new IdleGc(await inspectorFullGc(), log, { ...idleGcDefaults, intervalMs: 100 });
    // Kept across many turns of the loop, so the young generation's collections promote it.
    let burst: object[][] = [];
    for (let i = 0; i < 40; i++) {
      burst.push(Array.from({ length: 20_000 }, (_, j) => ({ j, name: `object-${i}-${j}` })));
      await yieldToLoop();
    }
    const held = process.memoryUsage().heapUsed;
    burst = [];
    idle.start();
    try {
      await eventually('a collection while idle', () =>
        lines.some((l) => l.msg === 'collected garbage while idle'),
      );
    } finally {
      idle.stop();
    }
    const after = process.memoryUsage().heapUsed;
    assert.equal(burst.length, 0);
    assert.ok(
      held - after > 40 * MiB,
      `the heap went from ${Math.round(held / MiB)} to ${Math.round(after / MiB)} MiB`,
    );
  });
});
