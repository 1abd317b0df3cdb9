import { CronExpressionParser } from 'cron-parser';
import { DAY_NAMES, expandedExpression, MONTH_NAMES, utcScheduleTimes } from './utc-schedule.js';

/**
 * The schedule rules of the Kubernetes CronJob API (robfig/cron ParseStandard plus the API's own
 * checks). cron-parser is more permissive (seconds, L, W, #, H, day-of-week 7), so every field is
 * checked here first and cron-parser only computes times of expressions Kubernetes accepts.
 */
const MACROS: Readonly<Record<string, string>> = {
  '@yearly': '0 0 1 1 *',
  '@annually': '0 0 1 1 *',
  '@monthly': '0 0 1 * *',
  '@weekly': '0 0 * * 0',
  '@daily': '0 0 * * *',
  '@midnight': '0 0 * * *',
  '@hourly': '0 * * * *',
};

interface Bounds {
  readonly label: string;
  readonly min: number;
  readonly max: number;
  readonly names?: readonly string[];
  readonly firstName?: number;
}

const FIELDS: readonly Bounds[] = [
  { label: 'minute', min: 0, max: 59 },
  { label: 'hour', min: 0, max: 23 },
  { label: 'day of month', min: 1, max: 31 },
  { label: 'month', min: 1, max: 12, names: MONTH_NAMES, firstName: 1 },
  { label: 'day of week', min: 0, max: 6, names: DAY_NAMES, firstName: 0 },
];

function parseValue(text: string, bounds: Bounds): number | string {
  const named = bounds.names?.indexOf(text.toLowerCase()) ?? -1;
  if (named >= 0) return named + (bounds.firstName ?? 0);
  if (!/^\d+$/.test(text)) return `"${text}" is not a number${bounds.names ? ' or name' : ''}`;
  return Number(text);
}

/** One comma-separated item of a field: `*`, `?`, `N`, `N-M`, each optionally `/step`. */
function checkRange(item: string, bounds: Bounds): string | undefined {
  const parts = item.split('/');
  if (parts.length > 2) return `too many slashes in "${item}"`;
  const [range = '', stepText] = parts;
  if (stepText !== undefined && !/^[1-9]\d*$/.test(stepText)) {
    return `step "${stepText}" in "${item}" must be a positive number`;
  }
  if (range === '*' || range === '?') return undefined;
  const ends = range.split('-');
  if (ends.length > 2) return `too many hyphens in "${item}"`;
  const values: number[] = [];
  for (const end of ends) {
    const value = parseValue(end, bounds);
    if (typeof value === 'string') return value;
    if (value < bounds.min || value > bounds.max) {
      return `${value} is outside ${bounds.min}-${bounds.max}`;
    }
    values.push(value);
  }
  const [start = 0, last = start] = values;
  if (start > last) return `range "${range}" starts after it ends`;
  return undefined;
}

function checkField(field: string, bounds: Bounds): string | undefined {
  for (const item of field.split(',')) {
    const problem = item === '' ? 'empty list item' : checkRange(item, bounds);
    if (problem) return `${bounds.label} field "${field}": ${problem}`;
  }
  return undefined;
}

/** The 5-field form of a schedule (macros expanded), or the reason Kubernetes would reject it. */
export function normalizeSchedule(schedule: string): { expression: string } | { problem: string } {
  const trimmed = schedule.trim();
  if (trimmed.includes('TZ')) {
    return { problem: 'a time zone in the schedule is not allowed; set spec.timeZone instead' };
  }
  if (trimmed.startsWith('@')) {
    const expression = MACROS[trimmed.toLowerCase()];
    if (expression === undefined) {
      return { problem: `unknown macro "${trimmed}"; use ${Object.keys(MACROS).join(', ')}` };
    }
    return { expression };
  }
  const fields = trimmed.split(/\s+/);
  if (fields.length !== FIELDS.length) {
    return {
      problem: `expected 5 fields (minute hour day-of-month month day-of-week), found ${fields.length}`,
    };
  }
  for (const [i, field] of fields.entries()) {
    const problem = checkField(field, FIELDS[i] as Bounds);
    if (problem) return { problem };
  }
  return { expression: fields.join(' ') };
}

/**
 * An IANA time zone as Go's time.LoadLocation accepts it: known to the runtime's tz database and
 * spelled with its exact case ("Local" and offsets are not zones).
 */
export function timeZoneProblem(timeZone: string): string | undefined {
  let resolved: string;
  try {
    resolved = new Intl.DateTimeFormat('en-US', { timeZone }).resolvedOptions().timeZone;
  } catch {
    return `unknown time zone "${timeZone}"`;
  }
  const canonical = supportedZones().get(timeZone.toLowerCase());
  const badCase = canonical !== undefined && canonical !== timeZone;
  const lowerSegment = timeZone.split('/').some((segment) => /^[a-z]/.test(segment));
  if (badCase || lowerSegment) {
    return `unknown time zone "${timeZone}" (names are case-sensitive, e.g. "${canonical ?? resolved}")`;
  }
  return undefined;
}

let zones: Map<string, string> | undefined;
function supportedZones(): Map<string, string> {
  zones ??= new Map(Intl.supportedValuesOf('timeZone').map((zone) => [zone.toLowerCase(), zone]));
  return zones;
}

/** Scheduled times around a reference instant, in the given zone. */
export interface ScheduleTimes {
  /** The latest scheduled time at or before the reference, if any in the last few years. */
  readonly previous: Date | undefined;
  /** The first scheduled time after the reference. */
  readonly next: Date | undefined;
}

/**
 * Every reconcile asks for the times around "now" of the same schedules, and cron-parser's zone
 * arithmetic was the largest share of a worker's own CPU. The answer is the same for any reference
 * in [previous, next), so it is kept per expression and zone and reused inside that window: a
 * cache of a pure function, which leaves the reconciler a function of its inputs.
 */
const remembered = new Map<string, { previous: Date; next: Date }>();
const rememberedMax = 10_000;

/** Parses a normalized expression; a problem when it never matches a date (e.g. "0 0 31 2 *"). */
export function scheduleTimes(
  expression: string,
  timeZone: string,
  reference: Date,
): ScheduleTimes | { problem: string } {
  const key = `${expression}\n${timeZone}`;
  const at = reference.getTime();
  const known = remembered.get(key);
  if (known && known.previous.getTime() <= at && at < known.next.getTime()) {
    return { previous: new Date(known.previous), next: new Date(known.next) };
  }
  const times = computeScheduleTimes(expression, timeZone, reference);
  if ('previous' in times && times.previous && times.next) {
    if (remembered.size >= rememberedMax) remembered.clear();
    remembered.set(key, { previous: new Date(times.previous), next: new Date(times.next) });
  }
  return times;
}

/** Zones that are UTC all year round: their times need no zone arithmetic (utc-schedule.ts). */
const UTC_ZONES: ReadonlySet<string> = new Set(['UTC', 'Etc/UTC']);

function computeScheduleTimes(
  expression: string,
  timeZone: string,
  reference: Date,
): ScheduleTimes | { problem: string } {
  return UTC_ZONES.has(timeZone)
    ? utcScheduleTimes(expression, reference)
    : zonedScheduleTimes(expression, timeZone, reference);
}

/** The times as cron-parser finds them, in any zone. */
export function zonedScheduleTimes(
  expression: string,
  timeZone: string,
  reference: Date,
): ScheduleTimes | { problem: string } {
  try {
    const expanded = expandedExpression(expression);
    const options = { currentDate: new Date(reference.getTime() + 1), tz: timeZone };
    const previous = CronExpressionParser.parse(expanded, options);
    const following = CronExpressionParser.parse(expanded, {
      ...options,
      currentDate: reference,
    });
    return { previous: tryStep(() => previous.prev()), next: tryStep(() => following.next()) };
  } catch (err) {
    return { problem: `"${expression}" never matches a date: ${(err as Error).message}` };
  }
}

function tryStep(step: () => { toDate(): Date }): Date | undefined {
  try {
    return step().toDate();
  } catch {
    return undefined;
  }
}
