import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import {
  eventually,
  failOverClusterPrimary,
  failOverSentinelPrimary,
  type OperatorSystem,
  type RedisFailover,
  type RedisMode,
} from '#testing';
import { assertConvergedEndState, startConvergedFaultSystem } from './support/convergence.js';
import { readinessProblem, watchReadiness } from './support/readiness.js';
import { churnWithReconcilesInFlight, type FaultSystem } from './support/system.js';

const RESET_MESSAGE = 'the queue lost its data in Redis; re-added every key';

const faults: {
  mode: RedisMode;
  title: string;
  inject: (sys: OperatorSystem) => Promise<RedisFailover>;
}[] = [
  {
    mode: 'cluster',
    title:
      'the Redis Cluster primary of the busiest shard is killed and its replica promoted by failure detection',
    inject: (sys) => failOverClusterPrimary(sys, { promoteBy: 'failure-detection' }),
  },
  {
    mode: 'sentinel',
    title: 'the Sentinel-managed Redis primary is killed and the Sentinels promote its replica',
    inject: failOverSentinelPrimary,
  },
];

for (const { mode, title, inject } of faults) {
  describe(`under load, ${title}`, { timeout: 300_000 }, () => {
    let fs: FaultSystem;
    before(async () => {
      // A claim outlasts the failover (seconds here), as QUEUE_LOCK_DURATION must in production
      // (docs/operations.md): runs in flight keep their keys through it.
      fs = await startConvergedFaultSystem({
        redisMode: mode,
        env: { QUEUE_LOCK_DURATION: '10s' },
      });
    });
    after(() => fs?.stop());

    test('the operator reconnects by itself, readiness drops and returns, every BackupJob converges, no key runs twice at once', async (t) => {
      const { sys, fleet } = fs;
      const processes = [...sys.watchers, ...sys.workers];
      const churn = await churnWithReconcilesInFlight(fs);
      const readiness = watchReadiness(sys, processes);
      // A failed assertion before the samples are read must not leave the polls running: they
      // would keep the test process alive after its last test.
      t.after(() => readiness.stop());
      await readiness.ready();
      const failover = await inject(sys);
      t.diagnostic(
        `killed the primary on port ${failover.killed}${failover.shard === undefined ? '' : ` (shard ${failover.shard})`}; the replica on ${failover.promoted} took over`,
      );
      // Specs keep changing after the failover: those changes must reach the workers too.
      await eventually('a change after the failover', () =>
        fleet.names.some((n) => fleet.lastChange(n) > failover.promotedAt),
      );
      await churn.stop();
      const runs = await assertConvergedEndState(sys, fleet);
      const samples = await readiness.stop();

      assert.ok(
        runs.some((r) => r.start < failover.killedAt && r.end > failover.killedAt),
        'some reconciles were in flight when the primary died',
      );
      // Reconnected by itself: every process still the one started, none exited or replaced.
      assert.deepEqual(
        processes.filter((p) => !p.running).map((p) => p.name),
        [],
        'processes that exited',
      );
      assert.equal(
        sys.watchers.length + sys.workers.length,
        processes.length,
        'processes replaced',
      );
      assert.deepEqual(
        processes.flatMap((p) => {
          const problem = readinessProblem(samples.get(p.name) ?? [], failover.killedAt);
          return problem ? [`${p.name}: ${problem}`] : [];
        }),
        [],
      );
      // The replica held every write the operator had confirmed: nothing to recover, no storm of
      // re-added keys.
      assert.deepEqual(
        sys.watchers
          .filter((w) => w.lines.some((l) => l.includes(RESET_MESSAGE)))
          .map((w) => w.name),
        [],
        'watchers that re-added every key',
      );
    });
  });
}
