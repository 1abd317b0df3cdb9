import type { ManagedProcess } from './process.js';

export type LogLine = Record<string, unknown> & { msg: string; time: string };

/** The JSON log lines of the processes (non-JSON lines are skipped). */
export function jsonLines(...procs: ManagedProcess[]): LogLine[] {
  const out: LogLine[] = [];
  for (const p of procs) {
    for (const line of p.lines) {
      if (!line.startsWith('{')) continue;
      try {
        out.push({ ...(JSON.parse(line) as LogLine), process: p.name });
      } catch {
        // A line cut by a kill is not evidence of anything.
      }
    }
  }
  return out;
}

/** One run of one key on one worker, from its `reconcile started` line to its last line. */
export interface ReconcileRun {
  readonly key: string;
  readonly reconcileID: string;
  readonly worker: string;
  readonly start: number;
  /** Its end line's time; for a run cut short by its worker's death, the time of the death. */
  readonly end: number;
  /** An end line was written (false: still running, or cut short by a kill). */
  readonly ended: boolean;
}

/** The lines that close a reconcile: success, the way a failed call ends it, or an abort. */
const END_MESSAGES = new Set([
  'reconciled',
  'reconcile aborted',
  'forbidden: the operator lacks a permission',
  'API server asked to retry later',
  'API call failed; backing off',
  'API server rejected a request',
]);

/** The queue's own line when a handler rejects; it names the key but not the run. */
const QUEUE_FAILURE = 'reconcile failed';

/**
 * Every reconcile the workers logged, paired by reconcileID. A run the queue aborted (its lease
 * was lost, or shutdown) ends at its `reconcile aborted` line, or, if the handler returned without
 * noticing, at the queue's `reconcile failed` line for its key. `exitedAt` gives the time each
 * stopped or killed worker died: a run of it without an end line is taken to last until then. A
 * run of a live worker without an end line is still going and ends "now". Taking a run to last
 * as long as it possibly can makes an overlap check err towards reporting.
 */
export function reconcileRuns(
  workers: readonly ManagedProcess[],
  exitedAt: ReadonlyMap<ManagedProcess, number> = new Map(),
): ReconcileRun[] {
  return workers.flatMap((worker) => runsOf(worker, exitedAt.get(worker)));
}

function runsOf(worker: ManagedProcess, death: number | undefined): ReconcileRun[] {
  const byId = new Map<string, { key: string; start?: number; end?: number }>();
  const queueFailures: { key: string; time: number }[] = [];
  for (const line of jsonLines(worker)) {
    if (typeof line.key !== 'string') continue;
    const time = Date.parse(line.time);
    const id = line.reconcileID;
    if (typeof id !== 'string') {
      if (line.msg === QUEUE_FAILURE) queueFailures.push({ key: line.key, time });
      continue;
    }
    const run = byId.get(id) ?? { key: line.key };
    byId.set(id, run);
    if (line.msg === 'reconcile started') run.start = time;
    if (END_MESSAGES.has(line.msg)) run.end = time;
  }
  const runs: ReconcileRun[] = [];
  for (const [reconcileID, run] of byId) {
    const start = run.start;
    if (start === undefined) continue;
    const end = run.end ?? queueFailures.find((f) => f.key === run.key && f.time >= start)?.time;
    runs.push({
      key: run.key,
      reconcileID,
      worker: worker.name,
      start,
      end: end ?? death ?? Date.now(),
      ended: end !== undefined,
    });
  }
  return runs;
}

/** Pairs of runs of the same key whose intervals intersect (touching ends are not overlaps). */
export function overlappingRuns(runs: readonly ReconcileRun[]): [ReconcileRun, ReconcileRun][] {
  const byKey = new Map<string, ReconcileRun[]>();
  for (const run of runs) byKey.set(run.key, [...(byKey.get(run.key) ?? []), run]);
  const overlaps: [ReconcileRun, ReconcileRun][] = [];
  for (const keyRuns of byKey.values()) {
    keyRuns.sort((a, b) => a.start - b.start);
    let latest = keyRuns[0] as ReconcileRun;
    for (const run of keyRuns.slice(1)) {
      if (run.start < latest.end) overlaps.push([latest, run]);
      if (run.end > latest.end) latest = run;
    }
  }
  return overlaps;
}

/** When the last run of each key started. */
export function lastStarts(runs: readonly ReconcileRun[]): Map<string, number> {
  const last = new Map<string, number>();
  for (const run of runs) last.set(run.key, Math.max(last.get(run.key) ?? 0, run.start));
  return last;
}
