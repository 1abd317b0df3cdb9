import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { normalizeSchedule, zonedScheduleTimes } from '../src/schedule.js';
import { DAY_NAMES, MONTH_NAMES, utcScheduleTimes } from '../src/utc-schedule.js';

/** A small seeded generator (mulberry32), so a failure names the seed that reproduces it. */
function random(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

interface Bounds {
  readonly min: number;
  readonly max: number;
  readonly names?: readonly string[];
  readonly firstName?: number;
}

const BOUNDS: readonly Bounds[] = [
  { min: 0, max: 59 },
  { min: 0, max: 23 },
  { min: 1, max: 31 },
  { min: 1, max: 12, names: MONTH_NAMES, firstName: 1 },
  { min: 0, max: 6, names: DAY_NAMES, firstName: 0 },
];

/** One field as a user might write it: wildcards, values, ranges, steps, lists and names. */
function field(next: () => number, b: Bounds): string {
  const int = (lo: number, hi: number) => lo + Math.floor(next() * (hi - lo + 1));
  const value = () => {
    const v = int(b.min, b.max);
    if (!b.names || next() < 0.6) return String(v);
    const name = b.names[v - (b.firstName ?? 0)] ?? '';
    return next() < 0.5 ? name : name.toUpperCase();
  };
  const item = (): string => {
    const step = () => `/${int(1, Math.max(1, Math.ceil((b.max - b.min) / 2)))}`;
    switch (int(0, 6)) {
      case 0:
        return '*';
      case 1:
        return `*${step()}`;
      case 2: {
        const lo = int(b.min, b.max);
        return `${lo}-${int(lo, b.max)}`;
      }
      case 3: {
        const lo = int(b.min, b.max);
        return `${lo}-${int(lo, b.max)}${step()}`;
      }
      case 4:
        return `${int(b.min, b.max)}${step()}`;
      default:
        return value();
    }
  };
  const roll = next();
  if (roll < 0.25) return '*';
  if (roll < 0.3) return '?';
  return Array.from({ length: int(1, 3) }, item).join(',');
}

/** Instants from 2020 to 2035: anywhere, on a whole minute, or a millisecond either side of one. */
function instant(next: () => number): Date {
  const start = Date.parse('2020-01-01T00:00:00Z');
  const span = Date.parse('2035-12-31T00:00:00Z') - start;
  const at = start + Math.floor(next() * span);
  const minute = Math.floor(at / 60_000) * 60_000;
  const shape = next();
  if (shape < 0.4) return new Date(at);
  if (shape < 0.6) return new Date(minute);
  return new Date(minute + (shape < 0.8 ? -1 : 1));
}

function same(
  a: ReturnType<typeof utcScheduleTimes>,
  b: ReturnType<typeof zonedScheduleTimes>,
): boolean {
  if ('problem' in a || 'problem' in b) return 'problem' in a && 'problem' in b;
  return a.previous?.getTime() === b.previous?.getTime() && a.next?.getTime() === b.next?.getTime();
}

const show = (t: ReturnType<typeof utcScheduleTimes>) =>
  'problem' in t
    ? t.problem
    : `previous ${t.previous?.toISOString()}, next ${t.next?.toISOString()}`;

describe('utcScheduleTimes finds the times cron-parser finds in UTC', () => {
  test('on generated expressions and instants, scheduled ones among them', () => {
    const seed = 20261207;
    const next = random(seed);
    let compared = 0;
    let problems = 0;
    while (compared < 3000) {
      const fields = BOUNDS.map((b) => field(next, b));
      // Now and then a day of month that short months lack: with a wildcard day of week, a
      // schedule that never matches.
      if (next() < 0.1) {
        fields[2] = ['30', '31', '30-31', '31/1'][Math.floor(next() * 4)]!;
        fields[3] = ['2', 'feb', '4,6', '2,4/5', '1-2'][Math.floor(next() * 5)]!;
      }
      const written = fields.join(' ');
      const normalized = normalizeSchedule(written);
      assert.ok('expression' in normalized, `${written}: ${JSON.stringify(normalized)}`);
      const { expression } = normalized;
      const references = [instant(next), instant(next)];
      const found = zonedScheduleTimes(expression, 'UTC', references[0]!);
      // A scheduled instant itself, and a millisecond either side: the edges of both answers.
      if ('previous' in found && found.previous) {
        const at = found.previous.getTime();
        references.push(new Date(at), new Date(at - 1), new Date(at + 1));
      }
      for (const reference of references) {
        const expected = zonedScheduleTimes(expression, 'UTC', reference);
        const actual = utcScheduleTimes(expression, reference);
        assert.ok(
          same(actual, expected),
          `seed ${seed}, "${expression}" at ${reference.toISOString()}: ${show(actual)}; cron-parser: ${show(expected)}`,
        );
        if ('problem' in actual) problems++;
        compared++;
      }
    }
    // The generator reaches both kinds of answer.
    assert.ok(problems > 0 && problems < compared, `${problems} problems in ${compared}`);
  });

  test('edge cases, each against cron-parser', () => {
    const cases: [string, string][] = [
      ['0 0 29 2 *', '2027-03-15T10:20:30Z'],
      ['0 0 29 2 *', '2100-03-01T00:00:00Z'],
      ['0 0 29 2 1', '2027-03-15T10:20:30Z'],
      ['0 0 31 2 *', '2027-03-15T10:20:30Z'],
      ['0 0 31 4,6 *', '2027-03-15T10:20:30Z'],
      ['0 0 30 2 mon', '2027-03-15T10:20:30Z'],
      ['0 0 31 * *', '2027-03-15T10:20:30Z'],
      ['*/1 0 */1 * 1', '2027-03-15T10:20:30Z'],
      ['59 23 31 12 *', '2027-12-31T23:59:00Z'],
      ['0 0 1 1 *', '2028-01-01T00:00:00Z'],
      ['5/15 * ? * *', '2026-05-29T12:00:00Z'],
      ['0 12 * * sun', '2026-05-31T12:00:00.001Z'],
    ];
    for (const [expression, at] of cases) {
      const reference = new Date(at);
      const expected = zonedScheduleTimes(expression, 'UTC', reference);
      const actual = utcScheduleTimes(expression, reference);
      assert.ok(
        same(actual, expected),
        `"${expression}" at ${at}: ${show(actual)}; cron-parser: ${show(expected)}`,
      );
    }
  });
});
