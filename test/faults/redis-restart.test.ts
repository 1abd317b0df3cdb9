import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { assertConvergedEndState, startConvergedFaultSystem } from './support/convergence.js';
import { churnWithReconcilesInFlight, waitForLeader, type FaultSystem } from './support/system.js';
import { eventually } from '#testing';

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
    // The restart lands while reconciles are in flight: their leases vanish with the data, and
    // the re-added keys must not run beside them.
    const churn = await churnWithReconcilesInFlight(fs);
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
    await churn.stop();
    // The overlap check covers the runs under way at the loss: the queue holds the shards until
    // they ended, so no re-added key ran beside them.
    const runs = await assertConvergedEndState(sys, fleet);
    const spanning = runs.filter((r) => r.start < lostAt && r.end > lostAt);
    assert.ok(spanning.length > 0, 'some reconciles were in flight when Redis lost the queue');
  });
});
