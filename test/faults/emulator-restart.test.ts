import { after, before, describe, test } from 'node:test';
import { assertConvergedEndState, startConvergedFaultSystem } from './support/convergence.js';
import { waitForLeader, type FaultSystem } from './support/system.js';
import { eventually } from '#testing';

describe('the API server restarted with its data kept', { timeout: 240_000 }, () => {
  let fs: FaultSystem;
  before(async () => {
    fs = await startConvergedFaultSystem();
  });
  after(() => fs?.stop());

  test('under load: every connection is cut for 2 s, the operator reconnects and all converge', async () => {
    const { sys, fleet } = fs;
    await waitForLeader(sys);
    const load = fleet.startLoad({ creates: 30 });
    await eventually('the load to be under way', () => fleet.names.length >= 25);
    await sys.emulator.restart(2_000);
    const back = Date.now();
    await eventually('changes after the restart', () =>
      fleet.names.some((n) => fleet.lastChange(n) > back + 1_000),
    );
    await load.stop();
    // A leader that could not renew through the outage exits; a standby then leads.
    await waitForLeader(sys, sys.watchers, 60_000);
    await assertConvergedEndState(sys, fleet);
  });
});
