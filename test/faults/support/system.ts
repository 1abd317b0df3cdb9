import {
  eventually,
  type ManagedProcess,
  type OperatorSystem,
  type OperatorSystemOptions,
  reconcileRuns,
  startOperatorSystem,
} from '#testing';
import { metricValue, scrapeMetrics, USERS } from '../../e2e/support.js';
import { Fleet, NAMESPACE } from './fleet.js';

/**
 * Short timings so faults resolve in seconds: a standby takes over a dead leader's Lease after
 * 6 s, a killed worker's key is free after 5 s, a key that keeps failing waits at most 2 s (the
 * 1000 s default cap would stretch a storm's tail into minutes). Not shorter: on a busy 2-core CI
 * machine a process can stall for a second or two, and a renew deadline or lock that short would
 * turn that into a fault the test did not inject. The resync stays at its 10 h default on
 * purpose: every change must reach the workers through the watch, not through a periodic re-add
 * that would hide a lost event.
 */
export const FAULT_ENV: Record<string, string> = {
  LEADER_ELECTION_LEASE_DURATION: '6s',
  LEADER_ELECTION_RENEW_DEADLINE: '4s',
  LEADER_ELECTION_RETRY_PERIOD: '500ms',
  QUEUE_LOCK_DURATION: '5s',
  BACKOFF_MAX: '2s',
};

export interface FaultSystem {
  readonly sys: OperatorSystem;
  readonly fleet: Fleet;
  /** Stops the load and the replacing of exited processes, then everything. */
  stop(): Promise<void>;
}

export async function startFaultSystem(options: OperatorSystemOptions = {}): Promise<FaultSystem> {
  const sys = await startOperatorSystem({
    watchers: 2,
    workers: 2,
    ...options,
    env: { ...FAULT_ENV, ...options.env },
    emulator: { ...options.emulator, namespaces: [NAMESPACE] },
  });
  const supervisor = superviseProcesses(sys);
  const fleet = new Fleet(sys);
  return {
    sys,
    fleet,
    async stop() {
      await fleet.stopLoads();
      await supervisor.stop();
      await sys.stop();
    },
  };
}

/**
 * What the Deployments do: a process that exits on its own with an error is replaced by a new one
 * (a watcher that lost its Lease exits to restart clean; any process may die at start-up, e.g.
 * when another test took its port first). Processes the test stops or kills (exit 0 or by signal)
 * are not.
 */
function superviseProcesses(sys: OperatorSystem): { stop(): Promise<void> } {
  let supervising = true;
  const starting = new Set<Promise<unknown>>();
  const watch = (proc: ManagedProcess, start: () => Promise<ManagedProcess>): void => {
    void proc.exited.then((code) => {
      if (!supervising || code === null || code === 0) return;
      const replacement = start().then((next) => watch(next, start));
      starting.add(replacement);
      void replacement.finally(() => starting.delete(replacement));
    });
  };
  for (const w of sys.watchers) watch(w, () => sys.startWatcher());
  for (const w of sys.workers) watch(w, () => sys.startWorker());
  return {
    async stop() {
      supervising = false;
      await Promise.allSettled([...starting]);
    },
  };
}

/** leader_election_master_status of one watcher (0 when its metrics cannot be read). */
export async function leaderStatus(sys: OperatorSystem, watcher: ManagedProcess): Promise<number> {
  if (!watcher.running) return 0;
  try {
    return metricValue(await scrapeMetrics(sys, watcher), 'leader_election_master_status');
  } catch {
    return 0;
  }
}

/** The one running watcher that reports itself leader. */
export function waitForLeader(
  sys: OperatorSystem,
  candidates: readonly ManagedProcess[] = sys.watchers,
  timeoutMs = 30_000,
): Promise<ManagedProcess> {
  return eventually(
    'a watcher to report leader_election_master_status 1',
    async () => {
      const statuses = await Promise.all(candidates.map((w) => leaderStatus(sys, w)));
      const leaders = candidates.filter((_, i) => statuses[i] === 1);
      return leaders.length === 1 ? leaders[0] : undefined;
    },
    timeoutMs,
    100,
  );
}

/** The time (ms since the epoch) of the process's first log line with this msg after `after`. */
export async function lineTime(
  proc: ManagedProcess,
  msg: string,
  after = 0,
  timeoutMs = 30_000,
): Promise<number> {
  const line = await proc.waitForLine((l) => {
    if (!l.includes(`"msg":"${msg}"`)) return false;
    return Date.parse((JSON.parse(l) as { time: string }).time) >= after;
  }, timeoutMs);
  return Date.parse((JSON.parse(line) as { time: string }).time);
}

/**
 * Churn with reconciles in flight, the ground most faults are injected on: the workers' API calls
 * take 300 ms, so a fault injected next lands while some reconciles run, and 30 BackupJobs are
 * created while random specs change. Resolves once a reconcile has been going for 100 ms; `stop`
 * ends the churn and the latency.
 */
export async function churnWithReconcilesInFlight(
  fs: FaultSystem,
): Promise<{ stop(): Promise<void> }> {
  const { sys, fleet } = fs;
  const slow = sys.emulator.faults.addLatency({ match: { user: USERS.worker }, fixedMs: 300 });
  const load = fleet.startLoad({ creates: 30 });
  await eventually('the load to be under way', () => fleet.names.length >= 25);
  await eventually(
    'a reconcile in flight',
    () => reconcileRuns(sys.workers).some((r) => !r.ended && Date.now() - r.start > 100),
    30_000,
    20,
  );
  return {
    async stop() {
      await load.stop();
      sys.emulator.faults.remove(slow);
    },
  };
}
