import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { eventually, jsonLines } from '../e2e/support.js';
import { assertConvergedEndState, startConvergedFaultSystem } from './support/convergence.js';
import { lineTime, waitForLeader, type FaultSystem } from './support/system.js';

describe('two watchers leading at once (split brain)', { timeout: 240_000 }, () => {
  let fs: FaultSystem;
  before(async () => {
    fs = await startConvergedFaultSystem({ workers: 3 });
  });
  after(() => fs?.stop());

  test('is harmless: the queue deduplicates, no key runs twice at once, all converge', async () => {
    const { sys, fleet } = fs;
    const oldLeader = await waitForLeader(sys);
    assert.ok(
      sys.watchers.some((w) => w !== oldLeader && w.running),
      'a standby watcher is running',
    );
    const load = fleet.startLoad({ creates: 30 });
    // A leader frozen past its lease (a GC pause, a stopped VM) is the split brain a Lease cannot
    // fence: the standby takes over, and the frozen one, once it runs again, still believes it
    // leads until its next renewal, with its informers delivering what piled up meanwhile.
    const frozenAt = Date.now();
    oldLeader.child.kill('SIGSTOP');
    let newLeaderAt: number;
    try {
      newLeaderAt = await eventually('another watcher to take the Lease', () => {
        const times = sys.watchers
          .filter((w) => w !== oldLeader)
          .flatMap((w) => jsonLines(w))
          .filter((l) => l.msg === 'became leader' && Date.parse(l.time) >= frozenAt)
          .map((l) => Date.parse(l.time));
        return times.length > 0 ? Math.min(...times) : undefined;
      });
      // Changes the frozen leader's watches hold but have not delivered yet.
      const changesBefore = fleet.names.map((n) => fleet.lastChange(n));
      await new Promise((r) => setTimeout(r, 1_000));
      assert.ok(
        fleet.names.some((n, i) => fleet.lastChange(n) > (changesBefore[i] ?? 0)),
        'BackupJobs changed while both held leadership',
      );
    } finally {
      oldLeader.child.kill('SIGCONT');
    }
    const oldLeaderStoppedAt = await lineTime(oldLeader, 'leader election lost', frozenAt);
    assert.ok(
      newLeaderAt < oldLeaderStoppedAt,
      'the new leader led while the old one still believed it did',
    );
    assert.equal(await oldLeader.exited, 1, 'the old leader exits to restart clean');

    await load.stop();
    await assertConvergedEndState(sys, fleet);
  });
});
