import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { ManagedProcess } from '../../libs/testing/src/process.js';
import { eventually, USERS } from '../e2e/support.js';
import { assertConvergedEndState, waitConverged } from './support/convergence.js';
import { reconcileRuns } from './support/reconcile-log.js';
import { startFaultSystem, type FaultSystem } from './support/system.js';

describe('a worker SIGKILLed mid-reconcile', { timeout: 240_000 }, () => {
  let fs: FaultSystem;
  before(async () => {
    fs = await startFaultSystem({ workers: 3 });
  });
  after(() => fs?.sys.stop());

  test('loses no key: the run it held completes on another worker once its lock expires', async () => {
    const { sys, fleet } = fs;
    fleet.create(20);
    await waitConverged(sys, fleet);

    // Every read of a BackupJob by a worker waits, so each run lasts long enough for a kill to
    // land inside it.
    const slow = sys.emulator.faults.addLatency({
      match: { user: USERS.worker, resource: 'backupjobs', verb: 'get' },
      fixedMs: 400,
    });
    const load = fleet.startLoad({ creates: 30 });
    const { victim, key } = await eventually(
      'a worker with a reconcile in flight',
      () => {
        for (const worker of sys.workers) {
          const run = reconcileRuns([worker]).find((r) => !r.ended && Date.now() - r.start > 100);
          if (run) return { victim: worker, key: run.key };
        }
        return undefined;
      },
      30_000,
      20,
    );
    const killedAt = new Map<ManagedProcess, number>([[victim, Date.now()]]);
    assert.equal(await victim.stop('SIGKILL'), null, 'the worker died by the signal');
    const inFlight = reconcileRuns([victim], killedAt).filter((r) => !r.ended);
    assert.ok(
      inFlight.some((r) => r.key === key),
      `the killed worker died with ${key} in flight (no end line)`,
    );

    // Someone else finishes the key the dead worker held.
    const survivors = sys.workers.filter((w) => w !== victim);
    await eventually(
      `${key} to be reconciled by another worker after the kill`,
      () =>
        reconcileRuns(survivors).some(
          (r) => r.key === key && r.ended && r.start >= (killedAt.get(victim) as number),
        ),
      60_000,
    );
    await load.stop();
    sys.emulator.faults.remove(slow);
    await assertConvergedEndState(sys, fleet, { killedAt });
  });
});
