import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { LeaseObserver } from '../src/lease-observer.js';
import { microTime, type Lease } from '../src/resourcelock.js';
import { validateTimings } from '../src/leaderelection.js';

function lease(
  resourceVersion: string,
  holderIdentity: string,
  leaseDurationSeconds = 15,
  renewTime?: string,
): Lease {
  return {
    metadata: { name: 'l', namespace: 'ns', resourceVersion },
    spec: {
      holderIdentity,
      leaseDurationSeconds,
      renewTime: renewTime ?? null,
      leaseTransitions: 2,
    },
  };
}

describe('LeaseObserver: expiry by observation time', () => {
  test('a lease stays held for leaseDuration after the follower first saw it change', () => {
    const o = new LeaseObserver(15);
    o.observe(lease('1', 'a'), 1000);
    assert.equal(o.isHeldByOther('b', 1000), true);
    assert.equal(o.isHeldByOther('b', 15_999), true);
    assert.equal(o.isHeldByOther('b', 16_000), false);
  });

  test('reading the same record again does not extend it: only a change restarts the clock', () => {
    const o = new LeaseObserver(15);
    o.observe(lease('1', 'a'), 0);
    o.observe(lease('1', 'a'), 10_000);
    assert.equal(o.isHeldByOther('b', 15_000), false);
    o.observe(lease('2', 'a'), 15_500);
    assert.equal(o.isHeldByOther('b', 30_000), true);
  });

  test("the holder's renewTime plays no part, however skewed its clock", () => {
    const o = new LeaseObserver(15);
    // A holder whose clock runs an hour behind: by wall clocks the lease looks long expired.
    o.observe(lease('1', 'a', 15, microTime(new Date(Date.now() - 3_600_000))), 0);
    assert.equal(o.isHeldByOther('b', 5000), true);
  });

  test('uses the leaseDurationSeconds written in the record', () => {
    const o = new LeaseObserver(15);
    o.observe(lease('1', 'a', 1), 0);
    assert.equal(o.isHeldByOther('b', 999), true);
    assert.equal(o.isHeldByOther('b', 1000), false);
  });

  test('an empty holder means free, and our own holding is not "other"', () => {
    const o = new LeaseObserver(15);
    o.observe(lease('1', ''), 0);
    assert.equal(o.isHeldByOther('b', 1), false);
    assert.equal(o.holder, undefined);
    o.observe(lease('2', 'b'), 2);
    assert.equal(o.isHeldByOther('b', 3), false);
    assert.equal(o.isHeldByOther('c', 3), true);
  });
});

describe('LeaseObserver: records to write', () => {
  const now = new Date('2026-12-02T10:11:26.270Z');

  test('a takeover starts a new term and counts a transition', () => {
    const o = new LeaseObserver(15);
    o.observe(lease('1', 'a'), 0);
    const record = o.nextRecord('b', now, 15);
    assert.deepEqual(record, {
      holderIdentity: 'b',
      leaseDurationSeconds: 15,
      acquireTime: '2026-12-02T10:11:26.270000Z',
      renewTime: '2026-12-02T10:11:26.270000Z',
      leaderTransitions: 3,
    });
  });

  test('a renewal keeps acquireTime and the transition count', () => {
    const o = new LeaseObserver(15);
    o.observe({ ...lease('1', 'b'), spec: { ...lease('1', 'b').spec, acquireTime: 'T0' } }, 0);
    const record = o.nextRecord('b', now, 15);
    assert.equal(record.acquireTime, 'T0');
    assert.equal(record.leaderTransitions, 2);
    assert.equal(record.renewTime, '2026-12-02T10:11:26.270000Z');
  });

  test('the first holder of a new lease starts at zero transitions', () => {
    assert.equal(new LeaseObserver(15).nextRecord('a', now, 15).leaderTransitions, 0);
  });

  test('release empties the holder and shortens the lease to one second', () => {
    const o = new LeaseObserver(15);
    o.observe(lease('1', 'a'), 0);
    const record = o.releaseRecord(now);
    assert.equal(record.holderIdentity, '');
    assert.equal(record.leaseDurationSeconds, 1);
    assert.equal(record.leaderTransitions, 2);
  });
});

describe('timings', () => {
  test("client-go's rules: leaseDuration > renewDeadline > 1.2 × retryPeriod", () => {
    assert.doesNotThrow(() => validateTimings(15_000, 10_000, 2_000));
    assert.throws(() => validateTimings(10_000, 10_000, 2_000), /leaseDuration/);
    assert.throws(() => validateTimings(15_000, 2_000, 2_000), /renewDeadline/);
  });

  test('microTime writes six fraction digits', () => {
    assert.equal(microTime(new Date('2026-01-02T03:04:05.006Z')), '2026-01-02T03:04:05.006000Z');
  });
});
