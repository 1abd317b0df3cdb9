import type { ReconcilerConfig } from './config.js';
import { normalizeSchedule, scheduleTimes, timeZoneProblem } from './schedule.js';
import type { EffectiveSpec } from './spec.js';

/** A spec the operator can act on: the expression in 5-field form and the zone it is read in. */
export interface ValidSchedule {
  readonly expression: string;
  readonly timeZone: string;
}

export type Validation =
  | { readonly valid: true; readonly schedule: ValidSchedule }
  | { readonly valid: false; readonly message: string };

/**
 * What the CRD schema cannot check: the cron expression as Kubernetes parses it, that it ever
 * fires, and the time zone. Every problem is reported at once so one edit can fix them all.
 */
export function validateSpec(spec: EffectiveSpec, now: Date, config: ReconcilerConfig): Validation {
  const problems: string[] = [];
  const normalized = normalizeSchedule(spec.schedule);
  if ('problem' in normalized)
    problems.push(`spec.schedule "${spec.schedule}": ${normalized.problem}`);
  const zoneProblem = spec.timeZone === undefined ? undefined : timeZoneProblem(spec.timeZone);
  if (zoneProblem) problems.push(`spec.timeZone: ${zoneProblem}`);
  if (problems.length > 0 || !('expression' in normalized)) {
    return { valid: false, message: problems.join('; ') };
  }
  const timeZone = spec.timeZone ?? config.defaultTimeZone;
  const times = scheduleTimes(normalized.expression, timeZone, now);
  if ('problem' in times) {
    return { valid: false, message: `spec.schedule "${spec.schedule}": ${times.problem}` };
  }
  return { valid: true, schedule: { expression: normalized.expression, timeZone } };
}
