import assert from 'node:assert/strict';
import { once } from 'node:events';
import { after, before, describe, test } from 'node:test';
import { eventually, jsonLines, type LogLine, type ManagedProcess, reconcileRuns } from '#testing';
import { USERS } from '../e2e/support.js';
import { assertConvergedEndState, waitConverged } from './support/convergence.js';
import { startFaultSystem, type FaultSystem } from './support/system.js';

describe('a worker SIGKILLed mid-reconcile', { timeout: 240_000 }, () => {
  let fs: FaultSystem;
  before(async () => {
    fs = await startFaultSystem({ workers: 3 });
  });
  after(() => fs?.stop());

  test('loses no key: the run it held completes on another worker once its lock expires', async () => {
    const { sys, fleet } = fs;
    fleet.create(20);
    await waitConverged(sys, fleet);

    // Every request of a worker waits, so each run lasts seconds (well inside the 5 s lock) and a
    // kill lands inside one whatever calls a run makes.
    const slow = sys.emulator.faults.addLatency({ match: { user: USERS.worker }, fixedMs: 400 });
    const slowSince = Date.now();
    const load = fleet.startLoad({ creates: 30 });
    const victim = await eventually(
      'a worker with a write of an unfinished reconcile in flight',
      () => sys.workers.find((worker) => writeInFlight(worker, slowSince)),
      30_000,
      20,
    );
    const killedAt = new Map<ManagedProcess, number>([[victim, Date.now()]]);
    assert.equal(await victim.stop('SIGKILL'), null, 'the worker died by the signal');
    const output = victim.child.stdout!;
    if (!output.closed) await once(output, 'close');
    const inFlight = reconcileRuns([victim], killedAt).filter((r) => !r.ended);
    assert.ok(inFlight.length > 0, 'the killed worker died with runs in flight (no end line)');
    const key = inFlight[0]!.key;

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

describe('choosing the moment to kill a worker', () => {
  // A worker's last lines as the test had read them when it killed the worker in a failed run:
  // the status write of a converging BackupJob's first run, sent before the hold began and
  // answered 29 ms later, its end line not yet read.
  const started = (id: string, time: string) =>
    JSON.stringify({ time, msg: 'reconcile started', key: 'faults/bj-010', reconcileID: id });
  const action = (id: string, time: string) =>
    JSON.stringify({ time, msg: 'action', key: 'faults/bj-010', reconcileID: id });
  const worker = (lines: string[]) => ({ name: 'worker-1', lines }) as unknown as ManagedProcess;
  const slowSince = Date.parse('2026-12-05T12:26:51.450Z');
  const now = Date.parse('2026-12-05T12:26:51.520Z');

  test('a write sent before the hold began is not taken for one in flight', () => {
    const lines = [
      started('a', '2026-12-05T12:26:51.300Z'),
      action('a', '2026-12-05T12:26:51.424Z'),
    ];
    assert.equal(writeInFlight(worker(lines), slowSince, now), false);
  });

  test('a write sent after the hold began, less than 300 ms ago, is', () => {
    const lines = [
      started('b', '2026-12-05T12:26:51.440Z'),
      action('b', '2026-12-05T12:26:51.460Z'),
    ];
    assert.equal(writeInFlight(worker(lines), slowSince, now), true);
  });
});

/**
 * Whether a run of the worker that has not ended sent a write less than 300 ms ago, and after
 * `slowSince`, when every request of a worker began to be held 400 ms: that write's answer, and
 * with it the run's next line, is then at least 100 ms away, so a kill now lands inside the run.
 * (A run merely without an end line among the lines read so far may already have ended: the
 * worker's output reaches the test a little late. A write logged in the millisecond the hold began
 * or before it may have gone out unheld, its run ended since: the first runs of the converging
 * BackupJobs can still be finishing then.)
 */
function writeInFlight(worker: ManagedProcess, slowSince: number, now = Date.now()): boolean {
  const open = reconcileRuns([worker]).filter((r) => !r.ended);
  const lastLine = new Map<string, LogLine>();
  for (const line of jsonLines(worker)) {
    if (typeof line.reconcileID === 'string') lastLine.set(line.reconcileID, line);
  }
  return open.some((run) => {
    const line = lastLine.get(run.reconcileID);
    if (line?.msg !== 'action') return false;
    const sentAt = Date.parse(line.time);
    return sentAt > slowSince && now - sentAt < 300;
  });
}
