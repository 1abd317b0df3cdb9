/**
 * The times of a 5-field schedule read in UTC, found from the set of values each field allows.
 * cron-parser finds them for any zone through luxon's zone arithmetic, which cost a worker half
 * a millisecond for every schedule it had not met before, and 29 ms for its first
 * (docs/performance.md, "Schedules in UTC"); in UTC, the default zone, a day is a fixed 24 hours
 * and none of that is needed.
 * The fields read as Kubernetes reads them; cron-parser, given them by expandedExpression, finds
 * the same times, which a test checks on thousands of generated expressions and instants.
 */

const MINUTE_MS = 60_000;
/** Enough days to reach a day that comes once in eight years: 29 February around 2100. */
const SEARCH_DAYS = 9 * 366;
/** The longest each month can be, as cron-parser counts it when it checks a day of month. */
const LONGEST_MONTH = [31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];
export const MONTH_NAMES: readonly string[] = [
  'jan',
  'feb',
  'mar',
  'apr',
  'may',
  'jun',
  'jul',
  'aug',
  'sep',
  'oct',
  'nov',
  'dec',
];
export const DAY_NAMES: readonly string[] = ['sun', 'mon', 'tue', 'wed', 'thu', 'fri', 'sat'];

interface Field {
  /** allowed[v]: whether value v matches. */
  readonly allowed: readonly boolean[];
  /**
   * An item is `*` or `?` with no step other than 1, alone or in a list: Kubernetes (robfig/cron)
   * then marks the field a star, and a day field that is one leaves the choice to the other.
   */
  readonly wildcard: boolean;
}

function valueOf(text: string, names: readonly string[] | undefined, firstName: number): number {
  const named = names?.indexOf(text.toLowerCase()) ?? -1;
  return named >= 0 ? named + firstName : Number(text);
}

/** A field normalizeSchedule accepted: items `*`, `?`, `N`, `N-M`, each with optional `/step`. */
function parseField(
  text: string,
  min: number,
  max: number,
  names?: readonly string[],
  firstName = 0,
): Field {
  const allowed = new Array<boolean>(max + 1).fill(false);
  let wildcard = false;
  for (const item of text.split(',')) {
    const [range = '', stepText] = item.split('/');
    const step = stepText === undefined ? 1 : Number(stepText);
    let from = min;
    let to = max;
    if (range === '*' || range === '?') {
      wildcard ||= step === 1;
    } else {
      const [start = '', end] = range.split('-');
      from = valueOf(start, names, firstName);
      // `N/step` runs from N to the field's end, as in cron-parser and Kubernetes.
      to = end !== undefined ? valueOf(end, names, firstName) : stepText !== undefined ? max : from;
    }
    for (let v = from; v <= to; v += step) allowed[v] = true;
  }
  return { allowed, wildcard };
}

interface Schedule {
  readonly minute: Field;
  readonly hour: Field;
  readonly dayOfMonth: Field;
  readonly month: Field;
  readonly dayOfWeek: Field;
}

function parseSchedule(expression: string): Schedule {
  const [minute = '', hour = '', dayOfMonth = '', month = '', dayOfWeek = ''] =
    expression.split(' ');
  return {
    minute: parseField(minute, 0, 59),
    hour: parseField(hour, 0, 23),
    dayOfMonth: parseField(dayOfMonth, 1, 31),
    month: parseField(month, 1, 12, MONTH_NAMES, 1),
    dayOfWeek: parseField(dayOfWeek, 0, 6, DAY_NAMES),
  };
}

/**
 * The expression as cron-parser is to read it: a wildcard field as `*`, any other as the list of
 * its values. cron-parser takes only a lone `*` or `?` for a wildcard, and refuses a value that a
 * field names twice (`1,1`, or a step and a value it covers); Kubernetes does neither.
 */
export function expandedExpression(expression: string): string {
  const s = parseSchedule(expression);
  return [s.minute, s.hour, s.dayOfMonth, s.month, s.dayOfWeek]
    .map((f) =>
      f.wildcard
        ? '*'
        : f.allowed.flatMap((allowed, value) => (allowed ? [String(value)] : [])).join(','),
    )
    .join(' ');
}

/** Two restricted day fields match either; a wildcard one defers to the other. */
function dayMatches(s: Schedule, date: Date): boolean {
  if (!s.month.allowed[date.getUTCMonth() + 1]) return false;
  const byDayOfMonth = s.dayOfMonth.allowed[date.getUTCDate()] === true;
  const byDayOfWeek = s.dayOfWeek.allowed[date.getUTCDay()] === true;
  if (s.dayOfWeek.wildcard) return byDayOfMonth;
  if (s.dayOfMonth.wildcard) return byDayOfWeek;
  return byDayOfMonth || byDayOfWeek;
}

/**
 * cron-parser's one check at parse time: a day of month that no allowed month has, unless the day
 * of week rescues it.
 */
function neverMatches(s: Schedule): boolean {
  if (!s.dayOfWeek.wildcard) return false;
  const firstDay = s.dayOfMonth.allowed.indexOf(true);
  const longest = Math.max(...LONGEST_MONTH.filter((_, i) => s.month.allowed[i + 1]));
  return firstDay > longest;
}

/** The first (direction 1) or last (-1) time of day in `s` from hour:minute on, that way. */
function timeOfDay(
  s: Schedule,
  hour: number,
  minute: number,
  direction: 1 | -1,
): [number, number] | undefined {
  for (let h = hour; h >= 0 && h <= 23; h += direction) {
    if (!s.hour.allowed[h]) continue;
    const from = h === hour ? minute : direction === 1 ? 0 : 59;
    for (let m = from; m >= 0 && m <= 59; m += direction) {
      if (s.minute.allowed[m]) return [h, m];
    }
  }
  return undefined;
}

/** The first scheduled minute at or after `from` (direction 1), or at or before it (-1). */
function search(s: Schedule, from: number, direction: 1 | -1): Date | undefined {
  let day = new Date(from);
  let hour = day.getUTCHours();
  let minute = day.getUTCMinutes();
  for (let i = 0; i <= SEARCH_DAYS; i++) {
    if (dayMatches(s, day)) {
      const time = timeOfDay(s, hour, minute, direction);
      if (time) {
        return new Date(
          Date.UTC(day.getUTCFullYear(), day.getUTCMonth(), day.getUTCDate(), time[0], time[1]),
        );
      }
    }
    day = new Date(Date.UTC(day.getUTCFullYear(), day.getUTCMonth(), day.getUTCDate() + direction));
    [hour, minute] = direction === 1 ? [0, 0] : [23, 59];
  }
  return undefined;
}

/**
 * The latest scheduled time at or before `reference` and the first after it, for an expression
 * normalizeSchedule accepted; a problem, worded as cron-parser words it, when it never matches.
 */
export function utcScheduleTimes(
  expression: string,
  reference: Date,
): { previous: Date | undefined; next: Date | undefined } | { problem: string } {
  const s = parseSchedule(expression);
  if (neverMatches(s)) {
    return {
      problem: `"${expression}" never matches a date: Invalid explicit day of month definition`,
    };
  }
  const minute = Math.floor(reference.getTime() / MINUTE_MS) * MINUTE_MS;
  return { previous: search(s, minute, -1), next: search(s, minute + MINUTE_MS, 1) };
}
