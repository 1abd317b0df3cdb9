import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { ErrorFault } from '#apiserver-emulator';
import { eventually, jsonLines, type ManagedProcess } from '#testing';
import { metricValue, scrapeMetrics, USERS } from '../e2e/support.js';
import { assertConvergedEndState, startConvergedFaultSystem } from './support/convergence.js';
import { waitForLeader, type FaultSystem } from './support/system.js';

const WRITES = ['create', 'update', 'patch'];

describe('API error storms', { timeout: 300_000 }, () => {
  let fs: FaultSystem;
  before(async () => {
    fs = await startConvergedFaultSystem();
  });
  after(() => fs?.stop());

  /**
   * Sum of a metric over processes; one whose metrics cannot be read (exited, or a replacement
   * still starting) counts 0.
   */
  async function total(
    procs: readonly ManagedProcess[],
    name: string,
    labels: Record<string, string> = {},
  ): Promise<number> {
    const values = await Promise.all(
      procs.map((p) =>
        scrapeMetrics(fs.sys, p).then(
          (text) => metricValue(text, name, labels),
          () => 0,
        ),
      ),
    );
    return values.reduce((a, b) => a + b, 0);
  }

  /** Runs `during` with the storm on and BackupJobs changing, then ends it and checks the end state. */
  async function storm(
    rule: ErrorFault,
    minAnswered: number,
    during: () => Promise<unknown>,
  ): Promise<void> {
    const { sys, fleet } = fs;
    const answered = () => sys.emulator.log.count({ user: rule.match?.user, code: rule.code });
    const before = answered();
    const load = fleet.startLoad({ creates: 8 });
    const id = sys.emulator.faults.addError(rule);
    try {
      await during();
      await eventually(
        `${minAnswered} requests answered ${rule.code} under load`,
        () => answered() - before >= minAnswered,
      );
    } finally {
      sys.emulator.faults.remove(id);
      await load.stop();
    }
    await assertConvergedEndState(sys, fleet);
  }

  test('500s on the workers’ writes: reconcile errors show in the metrics, all converge', async () => {
    const workers = fs.sys.workers;
    const before = await total(workers, 'controller_runtime_reconcile_errors_total');
    await storm({ match: { user: USERS.worker, verb: WRITES }, code: 500, rate: 0.5 }, 30, () =>
      eventually(
        'controller_runtime_reconcile_errors_total to grow during the storm',
        async () => (await total(workers, 'controller_runtime_reconcile_errors_total')) > before,
        30_000,
      ),
    );
  });

  test('429s with Retry-After on the workers’ writes: the workers wait as told, all converge', async () => {
    const workers = fs.sys.workers;
    const rule = { user: USERS.worker, verb: WRITES };
    await storm({ match: rule, code: 429, retryAfterSeconds: 1, rate: 0.5 }, 30, async () => {
      await eventually(
        'rest_client_requests_total{code="429"} on the workers',
        async () => (await total(workers, 'rest_client_requests_total', { code: '429' })) > 0,
        30_000,
      );
      await eventually('a worker to log that it waits for Retry-After', () =>
        workers.some((w) =>
          w.lines.some((l) => l.includes('"msg":"API server asked to retry later"')),
        ),
      );
    });
  });

  for (const code of [500, 429]) {
    test(`${code}s on the watcher’s list and watch: it retries with backoff, changes meanwhile all converge`, async () => {
      const { sys } = fs;
      const leader = await waitForLeader(sys);
      const before = await total([leader], 'rest_client_requests_total', { code: String(code) });
      await storm(
        {
          match: { user: USERS.watcher, verb: ['list', 'watch'] },
          code,
          ...(code === 429 ? { retryAfterSeconds: 1 } : {}),
        },
        // Each of the leader's three informers fails its re-list at least twice.
        6,
        async () => {
          // Open watches were accepted before the storm; end them so every re-list and re-watch
          // meets it.
          sys.emulator.watches.drop({ user: USERS.watcher });
          await eventually(
            `rest_client_requests_total{code="${code}"} on the leader`,
            async () =>
              (await total([leader], 'rest_client_requests_total', { code: String(code) })) >
              before,
            30_000,
          );
          await eventually(`the leader to log failed lists or watches`, () =>
            leader.lines.some(
              (l) => /"msg":"(list|watch) failed"/.test(l) && l.includes(`${code}`),
            ),
          );
        },
      );
      assert.ok(leader.running, 'the leader rode out the storm');
      if (code === 429) {
        // Each retry waited what Retry-After asked (1 s, plus jitter), however long the storm.
        const waits = jsonLines(leader)
          .filter((l) => /^(list|watch) failed$/.test(l.msg) && l.code === 429)
          .map((l) => Number(l.retryInMs));
        assert.ok(waits.length > 0, 'the leader logged its retries after 429');
        assert.deepEqual(
          waits.filter((ms) => !(ms >= 1000 && ms <= 1200)),
          [],
          'retries after 429 that did not wait Retry-After',
        );
      }
    });
  }
});
