import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { conditionChanged, setStatusCondition } from '../src/conditions.js';

const t1 = new Date('2026-05-29T01:00:00Z');
const t2 = new Date('2026-05-29T02:00:00Z');
const ready = { type: 'Ready', status: 'True' as const, reason: 'CronJobReady', message: 'ok' };

describe('setStatusCondition (meta.SetStatusCondition semantics)', () => {
  test('a new type is appended with lastTransitionTime = now', () => {
    const list = setStatusCondition(undefined, ready, 1, t1);
    assert.deepEqual(list, [
      { ...ready, observedGeneration: 1, lastTransitionTime: t1.toISOString() },
    ]);
  });

  test('same status: reason, message, generation change; lastTransitionTime does not', () => {
    const before = setStatusCondition(undefined, ready, 1, t1);
    const after = setStatusCondition(
      before,
      { ...ready, reason: 'Suspended', message: 'm' },
      2,
      t2,
    );
    assert.equal(after[0]?.lastTransitionTime, t1.toISOString());
    assert.equal(after[0]?.reason, 'Suspended');
    assert.equal(after[0]?.observedGeneration, 2);
  });

  test('a status flip moves lastTransitionTime', () => {
    const before = setStatusCondition(undefined, ready, 1, t1);
    const after = setStatusCondition(before, { ...ready, status: 'False' }, 1, t2);
    assert.equal(after[0]?.lastTransitionTime, t2.toISOString());
  });

  test('other conditions keep their place and the input is not modified', () => {
    const before = setStatusCondition(
      setStatusCondition(undefined, ready, 1, t1),
      { type: 'BackupSucceeded', status: 'Unknown', reason: 'NoBackupYet', message: '' },
      1,
      t1,
    );
    const copy = structuredClone(before);
    const after = setStatusCondition(before, { ...ready, status: 'False' }, 1, t2);
    assert.deepEqual(before, copy);
    assert.deepEqual(
      after.map((c) => c.type),
      ['Ready', 'BackupSucceeded'],
    );
  });

  test('conditionChanged looks at status, reason and message only', () => {
    const [stored] = setStatusCondition(undefined, ready, 1, t1);
    assert.equal(conditionChanged(stored, ready), false);
    assert.equal(conditionChanged(stored, { ...ready, message: 'other' }), true);
    assert.equal(conditionChanged(undefined, ready), true);
  });
});
