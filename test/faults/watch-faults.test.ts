import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { getBackupJob, USERS } from '../e2e/support.js';
import { assertConvergedEndState, startConvergedFaultSystem } from './support/convergence.js';
import { NAMESPACE } from './support/fleet.js';
import { waitForLeader, type FaultSystem } from './support/system.js';
import { eventually } from '#testing';

const WATCHER = { user: USERS.watcher };

describe('the watcher’s watches dropped, expired (410) and stalled', { timeout: 300_000 }, () => {
  let fs: FaultSystem;
  before(async () => {
    fs = await startConvergedFaultSystem();
  });
  after(() => fs?.stop());

  /** The leader's three informers (BackupJobs, CronJobs, Jobs) are watching. */
  function watching(): Promise<true> {
    return eventually('the leader’s three watches to be open', () =>
      fs.sys.emulator.watches.count(WATCHER) >= 3 ? true : undefined,
    );
  }

  test('dropped connections: the watches resume and every change during and after reaches the workers', async () => {
    const { sys, fleet } = fs;
    await waitForLeader(sys);
    const load = fleet.startLoad({ creates: 10 });
    for (let i = 0; i < 3; i++) {
      await watching();
      assert.ok(sys.emulator.watches.drop(WATCHER) >= 3, 'the leader’s watches were dropped');
      await new Promise((r) => setTimeout(r, 300));
    }
    await watching();
    await load.stop();
    await assertConvergedEndState(sys, fleet);
  });

  test('410 Gone on a compacted history: the watcher relists and misses nothing', async () => {
    const { sys, fleet } = fs;
    const leader = await waitForLeader(sys);
    const load = fleet.startLoad({ creates: 10 });
    await watching();
    await new Promise((r) => setTimeout(r, 300));
    // The history the watches would resume from is gone: any re-watch from there is 410 too.
    sys.emulator.compact();
    sys.emulator.watches.expireNextWatches(3, WATCHER);
    assert.ok(sys.emulator.watches.expire(WATCHER) >= 3, 'the leader’s watches got ERROR 410');
    await leader.waitForLine(/"msg":"watch expired \(410 Gone\), relisting"/, 30_000);
    await watching();
    await load.stop();
    await assertConvergedEndState(sys, fleet);
  });

  test('stalled watches (open, silent): the watchdog restarts them and the held-back changes arrive', async () => {
    const { sys, fleet } = fs;
    const leader = await waitForLeader(sys);
    await watching();
    const stalledAt = Date.now();
    assert.ok(sys.emulator.watches.stall(WATCHER) >= 3, 'the leader’s watches were stalled');
    const existing = fleet.names.length;
    const load = fleet.startLoad({ creates: 10 });
    await eventually(
      'BackupJobs created during the stall',
      () => fleet.names.length >= existing + 5,
    );
    await load.stop();
    // Nothing but the watch brings these keys (resync is hours away): while it is silent they wait.
    const created = fleet.names.slice(existing);
    assert.ok(
      created.every((name) => getBackupJob(sys, NAMESPACE, name)?.status === undefined),
      'no BackupJob created during the stall was reconciled before the watchdog',
    );
    // The watchdog's 90 s default: a silent watch is replaced, then it replays what it missed.
    const line = await leader.waitForLine(/"msg":"watch went silent, restarting it"/, 150_000);
    assert.ok(Date.parse((JSON.parse(line) as { time: string }).time) > stalledAt);
    await assertConvergedEndState(sys, fleet);
  });
});
