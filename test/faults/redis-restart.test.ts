import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { eventually } from '../e2e/support.js';
import { assertConvergedEndState, startConvergedFaultSystem } from './support/convergence.js';
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
    const load = fleet.startLoad({ creates: 30 });
    await eventually('the load to be under way', () => fleet.names.length >= 25);
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
    // Known limitation: a run under way when Redis lost its lease keeps going until its worker
    // reconnects and its heartbeat finds the lease gone, while the re-added key may already run
    // on another worker. Its writes carry resourceVersion preconditions, so the later run gets a
    // 409 and re-reads (harmless), but the two runs do overlap. Exclusivity is asserted for every
    // run that started after the loss.
    await assertConvergedEndState(sys, fleet, { leasesLostAt: lostAt });
  });
});
