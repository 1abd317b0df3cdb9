import type { RequestRecord } from '#apiserver-emulator';
import { cronJobName } from '#reconciler';
import type { Churn } from './churn.js';
import type { Violation } from './invariants.js';
import { type ReconcileRun } from '#testing';

/** Everything a violation's history is drawn from. */
export interface Evidence {
  readonly churn: Churn;
  readonly runs: readonly ReconcileRun[];
  readonly requests: readonly RequestRecord[];
  readonly namespace: string;
  /** When the soak started: times are printed as offsets from it. */
  readonly t0: number;
}

const at = (ms: number, t0: number) => `+${((ms - t0) / 1000).toFixed(1)}s`;

/**
 * A violation with the history of its object: what the churn did to it, the runs of its key,
 * and the writes the API server saw on it and its CronJob, last first kept.
 */
export function describeViolation(v: Violation, e: Evidence): string[] {
  const lines = [`✖ ${v.invariant}: ${v.object ?? ''} ${v.message}`.replace(/\s+/g, ' ').trim()];
  if (!v.object) return lines;
  const name = v.object.startsWith('bj-') ? v.object.replace(/-backup$/, '') : v.object;
  for (const event of e.churn.historyOf(name).slice(-8)) {
    lines.push(`    ${at(event.time, e.t0)} churn ${event.op} ${event.detail}`);
  }
  const key = `${e.namespace}/${name}`;
  for (const run of e.runs.filter((r) => r.key === key).slice(-6)) {
    const end = run.ended ? at(run.end, e.t0) : 'no end line';
    lines.push(`    ${at(run.start, e.t0)} run on ${run.worker} … ${end}`);
  }
  const objects = new Set([name, cronJobName(name)]);
  const writes = e.requests.filter(
    (r) =>
      r.namespace === e.namespace &&
      objects.has(r.name) &&
      !['get', 'list', 'watch'].includes(r.verb),
  );
  for (const r of writes.slice(-10)) {
    const who = r.user.slice(r.user.lastIndexOf(':') + 1);
    const guard = r.precondition ? ` ${r.precondition}` : '';
    lines.push(
      `    ${at(r.time, e.t0)} ${r.verb} ${r.resource}${r.subresource ? `/${r.subresource}` : ''} ${r.name} by ${who} → ${r.code}${r.fault ? ` (${r.fault})` : ''}${guard}`,
    );
  }
  return lines;
}
