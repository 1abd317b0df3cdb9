import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import {
  eventually,
  jsonLines,
  type OperatorSystem,
  startOperatorSystem,
  startTcpProxy,
  type TcpProxy,
  untilWorking,
} from '#testing';
import {
  assertConvergedEndState,
  startConvergedFaultSystem,
  waitConverged,
} from './support/convergence.js';
import { Fleet, NAMESPACE } from './support/fleet.js';
import { FAULT_ENV, lineTime, waitForLeader, type FaultSystem } from './support/system.js';

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
    // It stops when its renewal fails, or sooner, when Redis refuses its first late write.
    const oldLeaderStoppedAt = await lineTime(
      oldLeader,
      'leadership lost; exiting to restart clean',
      frozenAt,
    );
    assert.ok(
      newLeaderAt < oldLeaderStoppedAt,
      'the new leader led while the old one still believed it did',
    );
    assert.equal(await oldLeader.exited, 1, 'the old leader exits to restart clean');

    await load.stop();
    await assertConvergedEndState(sys, fleet);
  });
});

/**
 * A leader paused past its Lease with a snapshot write in flight (held on its way to Redis, as a
 * congested link would) must not overwrite what its successor wrote: the write carries its term,
 * and the successor's term, raised as it took over, refuses it.
 */
describe('a leader paused past its Lease with a write in flight', { timeout: 240_000 }, () => {
  let sys: OperatorSystem;
  let proxy: TcpProxy;
  let fleet: Fleet;
  before(async () => {
    sys = await startOperatorSystem({
      watchers: 0,
      workers: 2,
      env: FAULT_ENV,
      emulator: { namespaces: [NAMESPACE] },
    });
    proxy = await startTcpProxy(sys.redis!.port);
    fleet = new Fleet(sys);
  });
  after(async () => {
    await fleet?.stopLoads();
    await sys?.stop();
    await proxy?.stop();
  });

  test('its late write is refused by the new term, logged, and it exits; all converge', async () => {
    // Start-up is bounded as untilWorking bounds it: the scenario's clock starts after it.
    const oldLeader = await sys.startWatcher({ REDIS_URL: `redis://127.0.0.1:${proxy.port}` });
    await oldLeader.waitForLine(/"msg":"became leader"/, 60_000);
    const standby = await sys.startWatcher();
    await standby.waitForLine(/"msg":"campaigning for leadership"/, 60_000);
    await untilWorking(sys);
    fleet.create(10);
    await waitConverged(sys, fleet);

    const load = fleet.startLoad({ creates: 10 });
    // Held from the leader's next snapshot write on: that write is the one in flight.
    proxy.hold((chunk) => chunk.includes('"backupJob"'));
    await eventually('a snapshot write of the leader held on its way to Redis', () =>
      proxy.held().includes('"backupJob"'),
    );
    const frozenAt = Date.now();
    oldLeader.child.kill('SIGSTOP');
    try {
      // The successor's term begins with its fences raised, before its first snapshot write.
      await lineTime(standby, 'became leader', frozenAt);
      await lineTime(standby, 'swept snapshots of BackupJobs that are gone', frozenAt);
      proxy.release();
    } finally {
      oldLeader.child.kill('SIGCONT');
    }
    const line = await oldLeader.waitForLine(
      /"msg":"a newer leader fenced this one; its writes were refused"/,
      30_000,
    );
    const { term, fence, refused } = JSON.parse(line) as {
      term: number;
      fence: number;
      refused: number;
    };
    assert.ok(fence > term, `the refusing term ${fence} is newer than the writer's ${term}`);
    assert.ok(refused >= 1, 'at least the held write was refused');
    assert.equal(await oldLeader.exited, 1, 'the deposed leader exits to restart clean');
    assert.ok(
      !jsonLines(standby).some((l) => l.msg.includes('fenced')),
      'the new leader had no write refused',
    );
    await load.stop();
    await waitConverged(sys, fleet);
  });
});
