import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { eventually, USERS } from '../e2e/support.js';
import { assertConvergedEndState, startConvergedFaultSystem } from './support/convergence.js';
import { reconcileRuns } from './support/reconcile-log.js';
import { waitForLeader, type FaultSystem } from './support/system.js';

const RESET_MESSAGE = 'the queue lost its data in Redis; re-added every key';

describe('Redis restarted empty under load', { timeout: 240_000 }, () => {
  let fs: FaultSystem;
  before(async () => {
    fs = await startConvergedFaultSystem();
  });
  after(() => fs?.stop());

  test('the queue reports the loss, the watcher re-adds every key, all converge', async () => {
    const { sys, fleet } = fs;
    const leader = await waitForLeader(sys);
    // Slow API calls keep runs going for seconds, so the restart lands while some are in flight:
    // their leases vanish with the data, and the re-added keys must not run beside them.
    const slow = sys.emulator.faults.addLatency({ match: { user: USERS.worker }, fixedMs: 300 });
    const load = fleet.startLoad({ creates: 30 });
    await eventually('the load to be under way', () => fleet.names.length >= 25);
    await eventually(
      'a reconcile in flight',
      () => reconcileRuns(sys.workers).some((r) => !r.ended && Date.now() - r.start > 100),
      30_000,
      20,
    );
    const existing = fleet.names.length;
    const lostAt = Date.now();
    await sys.redis!.restartEmpty();

    const line = await leader.waitForLine((l) => l.includes(RESET_MESSAGE), 60_000);
    const { keys } = JSON.parse(line) as { keys: number };
    assert.ok(
      keys >= existing,
      `the leader re-added ${keys} keys; ${existing} BackupJobs existed when Redis lost its data`,
    );
    await eventually('more changes after the reset', () =>
      fleet.names.some((n) => fleet.lastChange(n) > Date.parse(JSON.parse(line).time)),
    );
    await load.stop();
    sys.emulator.faults.remove(slow);
    // The overlap check covers the runs under way at the loss: the queue holds the shards until
    // they ended, so no re-added key ran beside them.
    const runs = await assertConvergedEndState(sys, fleet);
    const spanning = runs.filter((r) => r.start < lostAt && r.end > lostAt);
    assert.ok(spanning.length > 0, 'some reconciles were in flight when Redis lost the queue');
  });
});
