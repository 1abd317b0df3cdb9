import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import {
  overlappingRuns,
  reconcileRuns,
  type ManagedProcess,
  type ReconcileRun,
} from '../src/index.js';

const run = (key: string, worker: string, start: number, end: number): ReconcileRun => ({
  key,
  reconcileID: `${worker}-${start}`,
  worker,
  start,
  end,
  ended: true,
});

/** A stand-in for a worker process: only its name and its log lines are read. */
function worker(name: string, lines: Record<string, unknown>[]): ManagedProcess {
  return { name, lines: lines.map((l) => JSON.stringify(l)) } as unknown as ManagedProcess;
}

const at = (ms: number) => new Date(ms).toISOString();

describe('reconcile log', () => {
  test('two runs of one key that intersect are an overlap; touching ends and other keys are not', () => {
    assert.deepEqual(
      overlappingRuns([run('a', 'w0', 0, 10), run('a', 'w1', 10, 20), run('b', 'w1', 5, 8)]),
      [],
    );
    assert.equal(
      overlappingRuns([run('a', 'w0', 0, 10), run('b', 'w1', 1, 2), run('a', 'w1', 9, 12)]).length,
      1,
    );
    assert.equal(
      overlappingRuns([run('a', 'w0', 0, 30), run('a', 'w1', 5, 6), run('a', 'w2', 20, 40)]).length,
      2,
    );
  });

  test('a run lasts from its start line to its end line, or until its worker died', () => {
    const lines = [
      { msg: 'reconcile started', key: 'ops/a', reconcileID: 'r1', time: at(1000) },
      { msg: 'reconciled', key: 'ops/a', reconcileID: 'r1', time: at(1500) },
      { msg: 'reconcile started', key: 'ops/b', reconcileID: 'r2', time: at(2000) },
      { msg: 'reconcile failed', key: 'ops/b', time: at(2600) },
      { msg: 'reconcile started', key: 'ops/c', reconcileID: 'r3', time: at(3000) },
    ];
    const w = worker('worker-0', lines);
    const runs = reconcileRuns([w], new Map([[w, 4000]]));
    assert.deepEqual(
      runs.map((r) => [r.key, r.start, r.end, r.ended]),
      [
        ['ops/a', 1000, 1500, true],
        ['ops/b', 2000, 2600, true],
        ['ops/c', 3000, 4000, false],
      ],
    );
  });
});
