import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { assertConvergedEndState, waitConverged } from './support/convergence.js';
import {
  leaderStatus,
  lineTime,
  startFaultSystem,
  waitForLeader,
  type FaultSystem,
} from './support/system.js';
import { eventually } from '#testing';

// A lease well above the retry period, so a handover within a retry period (+ slack) can only
// come from the Lease being released, never from it expiring.
const LEASE_MS = 8_000;
const RETRY_MS = 500;
const RETRY_JITTER = 1.2;
// The bounds below are leader election's correctness properties (client-go semantics), not
// performance: the slack absorbs a loaded 2-core CI machine and process scheduling.
const SLACK_MS = 3_000;

describe('the leading watcher dies or is stopped', { timeout: 240_000 }, () => {
  let fs: FaultSystem;
  before(async () => {
    fs = await startFaultSystem({
      env: {
        LEADER_ELECTION_LEASE_DURATION: `${LEASE_MS}ms`,
        LEADER_ELECTION_RENEW_DEADLINE: '5s',
        LEADER_ELECTION_RETRY_PERIOD: `${RETRY_MS}ms`,
      },
    });
    fs.fleet.create(20);
    await waitConverged(fs.sys, fs.fleet);
  });
  after(() => fs?.stop());

  test('SIGKILL: the standby leads within lease duration + retry period, and changes made after the kill are reconciled', async (t) => {
    const { sys, fleet } = fs;
    const leader = await waitForLeader(sys);
    const standby = sys.watchers.find((w) => w !== leader)!;
    const load = fleet.startLoad({ creates: 20 });
    await new Promise((r) => setTimeout(r, 500));
    const killedAt = Date.now();
    await leader.stop('SIGKILL');

    const tookOverAt = await lineTime(standby, 'became leader', killedAt);
    t.diagnostic(`standby led ${tookOverAt - killedAt} ms after SIGKILL (lease ${LEASE_MS} ms)`);
    assert.ok(
      tookOverAt - killedAt <= LEASE_MS + RETRY_MS * RETRY_JITTER + SLACK_MS,
      `the standby took over ${tookOverAt - killedAt} ms after the kill`,
    );
    await eventually('the standby to report leader_election_master_status 1', async () =>
      (await leaderStatus(sys, standby)) === 1 ? true : undefined,
    );
    // Writes keep coming after the takeover; every one must reach the workers.
    await eventually('a change after the takeover', () =>
      fleet.names.some((n) => fleet.lastChange(n) > tookOverAt),
    );
    await load.stop();
    await assertConvergedEndState(sys, fleet);
  });

  test('SIGTERM: the leader releases the Lease, a standby leads within about one retry period, the old leader exits 0', async (t) => {
    const { sys, fleet } = fs;
    const leader = await waitForLeader(sys);
    const standby = await sys.startWatcher();
    // Campaigning: it has read the Lease and knows who holds it.
    await standby.waitForLine(/"msg":"new leader observed"/, 30_000);
    const load = fleet.startLoad({ creates: 10 });
    await new Promise((r) => setTimeout(r, 500));
    const termAt = Date.now();
    assert.equal(await leader.stop('SIGTERM'), 0, 'the old leader exits 0');
    await leader.waitForLine(/"msg":"released leader lease"/, 1);

    const tookOverAt = await lineTime(standby, 'became leader', termAt);
    t.diagnostic(`standby led ${tookOverAt - termAt} ms after SIGTERM (retry ${RETRY_MS} ms)`);
    assert.ok(
      tookOverAt - termAt <= RETRY_MS * RETRY_JITTER + SLACK_MS,
      `the standby took over ${tookOverAt - termAt} ms after SIGTERM (lease: ${LEASE_MS} ms)`,
    );
    await eventually('the new leader to report leader_election_master_status 1', async () =>
      (await leaderStatus(sys, standby)) === 1 ? true : undefined,
    );
    await eventually('a change after the handover', () =>
      fleet.names.some((n) => fleet.lastChange(n) > tookOverAt),
    );
    await load.stop();
    await assertConvergedEndState(sys, fleet);
  });
});
