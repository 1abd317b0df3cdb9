import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { backendKinds, startBackend, type Backend } from './support.js';
import { runStress } from './stress.js';

for (const kind of backendKinds) {
  describe(`queue stress across processes (${kind} Redis)`, () => {
    let backend: Backend;
    before(async () => {
      backend = await startBackend(kind);
    });
    after(async () => {
      await backend.stop();
    });

    test('hot keys, errors, RequeueAfter and a SIGKILL mid-run: no overlap, no lost update', async (t) => {
      const report = await runStress(backend, {
        adds: 6_000,
        keys: 15,
        consumers: 2,
        shards: 8,
        concurrency: 4,
        producerLanes: 16,
        maxRunMs: 5,
        lockDurationMs: 1_000,
        kill: true,
      });
      t.diagnostic(JSON.stringify(report));
      assert.equal(report.markerViolations, 0, 'a run found the key marker of another run');
      assert.equal(report.overlaps, 0, 'two runs of one key overlapped in time');
      assert.equal(report.sampleViolations, 0, 'a key was waiting and running at once');
      assert.ok(report.samples > 0);
      assert.equal(report.lostUpdates, 0, 'a key did not run after its last add');
      assert.ok(report.killedOpenRuns >= 1, 'the consumer was killed while running a key');
      assert.equal(
        report.recoveredAfterKill,
        report.killedOpenRuns,
        'a killed run was not recovered',
      );
      assert.ok((report.outcomes.error ?? 0) > 0 && (report.outcomes.after ?? 0) > 0);
      assert.ok(report.coalescingRatio > 1, 'adds of a waiting key were not coalesced');
    });
  });
}
