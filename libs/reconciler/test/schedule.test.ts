import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { normalizeSchedule, scheduleTimes, timeZoneProblem } from '../src/schedule.js';

describe('normalizeSchedule accepts what the Kubernetes CronJob parser accepts', () => {
  const accepted: [string, string][] = [
    ['10 2 * * *', '10 2 * * *'],
    ['*/15 * * * *', '*/15 * * * *'],
    ['0 0 * * MON-FRI', '0 0 * * MON-FRI'],
    ['0 0 1 jan,jul *', '0 0 1 jan,jul *'],
    ['5/15 * ? * *', '5/15 * ? * *'],
    ['0-30/10 1,2,3 1-31 1-12 0-6', '0-30/10 1,2,3 1-31 1-12 0-6'],
    ['0  3 * *  *', '0 3 * * *'],
    ['@hourly', '0 * * * *'],
    ['@daily', '0 0 * * *'],
    ['@midnight', '0 0 * * *'],
    ['@weekly', '0 0 * * 0'],
    ['@monthly', '0 0 1 * *'],
    ['@yearly', '0 0 1 1 *'],
    ['@annually', '0 0 1 1 *'],
  ];
  for (const [input, expression] of accepted) {
    test(`"${input}"`, () => assert.deepEqual(normalizeSchedule(input), { expression }));
  }
});

describe('normalizeSchedule rejects what Kubernetes rejects (cron-parser would accept many)', () => {
  const rejected: [string, RegExp][] = [
    ['0 10 2 * * *', /expected 5 fields/],
    ['10 2 * *', /expected 5 fields/],
    ['0 0 L * *', /day of month field "L"/],
    ['0 0 * * 5L', /day of week/],
    ['0 0 * * 1#2', /day of week/],
    ['H 2 * * *', /minute field "H"/],
    ['0 0 15W * *', /day of month/],
    ['0 0 * * 7', /7 is outside 0-6/],
    ['60 * * * *', /60 is outside 0-59/],
    ['0 24 * * *', /24 is outside 0-23/],
    ['0 0 0 * *', /0 is outside 1-31/],
    ['0 0 * 13 *', /13 is outside 1-12/],
    ['*/0 * * * *', /step "0"/],
    ['1/2/3 * * * *', /too many slashes/],
    ['1-2-3 * * * *', /too many hyphens/],
    ['30-10 * * * *', /starts after it ends/],
    ['1,,2 * * * *', /empty list item/],
    ['CRON_TZ=UTC 0 0 * * *', /time zone in the schedule/],
    ['TZ=Europe/Berlin 0 0 * * *', /time zone in the schedule/],
    ['@every 1h', /unknown macro/],
    ['@reboot', /unknown macro/],
  ];
  for (const [input, problem] of rejected) {
    test(`"${input}"`, () => {
      const result = normalizeSchedule(input);
      assert.ok('problem' in result, `expected a problem for ${input}`);
      assert.match(result.problem, problem);
    });
  }
});

describe('timeZoneProblem', () => {
  for (const zone of [
    'UTC',
    'Etc/UTC',
    'Europe/Berlin',
    'America/New_York',
    'Asia/Calcutta',
    'US/Eastern',
  ]) {
    test(`accepts ${zone}`, () => assert.equal(timeZoneProblem(zone), undefined));
  }
  for (const zone of ['Local', 'Mars/Olympus', 'europe/berlin', 'Europe/berlin', 'Nowhere']) {
    test(`rejects ${zone}`, () => assert.match(timeZoneProblem(zone) ?? '', /unknown time zone/));
  }
});

/** The times found are these ISO instants (and not a problem). */
function assertTimes(
  times: ReturnType<typeof scheduleTimes>,
  previous: string,
  next: string,
  context?: string,
): void {
  if ('problem' in times) assert.fail(`${context ?? ''} ${times.problem}`);
  assert.equal(times.previous?.toISOString(), previous, context);
  assert.equal(times.next?.toISOString(), next, context);
}

describe('scheduleTimes', () => {
  test('the previous and next run around a reference, in the given zone', () => {
    const times = scheduleTimes('10 2 * * *', 'Europe/Berlin', new Date('2026-05-29T12:00:00Z'));
    // 02:10 in Berlin (CEST, UTC+2) is 00:10 UTC.
    assertTimes(times, '2026-05-29T00:10:00.000Z', '2026-05-30T00:10:00.000Z');
  });

  test('a reference exactly on a scheduled time counts as previous', () => {
    const times = scheduleTimes('0 * * * *', 'UTC', new Date('2026-05-29T12:00:00Z'));
    assertTimes(times, '2026-05-29T12:00:00.000Z', '2026-05-29T13:00:00.000Z');
  });

  test('remembered times are only reused inside their window, in any order of references', () => {
    const quarter = 15 * 60_000;
    const start = Date.parse('2026-05-29T12:00:00Z');
    // On, just before and just after every boundary, visited out of order.
    const references = [0, 1, 4, 2, 3, 0, 4]
      .flatMap((n) => [start + n * quarter - 1, start + n * quarter, start + n * quarter + 1])
      .sort((a, b) => ((a * 7919) % 1000) - ((b * 7919) % 1000));
    for (const at of references) {
      const times = scheduleTimes('*/15 * * * *', 'UTC', new Date(at));
      assert.ok(!('problem' in times));
      const previous = Math.floor(at / quarter) * quarter;
      assert.equal(
        times.previous?.getTime(),
        previous,
        `previous of ${new Date(at).toISOString()}`,
      );
      assert.equal(
        times.next?.getTime(),
        previous + quarter,
        `next of ${new Date(at).toISOString()}`,
      );
    }
  });

  test('a day field with `*` in it, unstepped, leaves the choice to the other, as in Kubernetes', () => {
    // Friday 29 May 2026; the schedule's Mondays around it, at 12:00 in each zone.
    const reference = new Date('2026-05-29T12:00:00Z');
    const mondays: Record<string, [string, string]> = {
      UTC: ['2026-05-25T12:00:00.000Z', '2026-06-01T12:00:00.000Z'],
      'Europe/Berlin': ['2026-05-25T10:00:00.000Z', '2026-06-01T10:00:00.000Z'],
    };
    for (const [zone, [previous, next]] of Object.entries(mondays)) {
      for (const dayOfMonth of ['*', '?', '*/1', '*,5', '?/1,3']) {
        const times = scheduleTimes(`0 12 ${dayOfMonth} * mon`, zone, reference);
        assertTimes(times, previous, next, `${dayOfMonth} in ${zone}`);
      }
    }
  });

  test('a stepped `*` restricts its field: either day field then matches', () => {
    // Day 29 is odd (*/2 from 1) though a Friday; day 31 is a Sunday.
    const times = scheduleTimes('0 12 */2 * mon', 'UTC', new Date('2026-05-29T12:00:00Z'));
    assertTimes(times, '2026-05-29T12:00:00.000Z', '2026-05-31T12:00:00.000Z');
  });

  test('a value a field lists twice is accepted, as Kubernetes accepts it, in any zone', () => {
    // Hours 0, 1 and 12 (12 twice); in Berlin (UTC+2) 12:00 is 10:00 UTC and 00:00 is 22:00 UTC.
    const around: Record<string, [string, string]> = {
      UTC: ['2026-05-29T12:00:00.000Z', '2026-05-30T00:00:00.000Z'],
      'Europe/Berlin': ['2026-05-29T10:00:00.000Z', '2026-05-29T22:00:00.000Z'],
    };
    for (const [zone, [previous, next]] of Object.entries(around)) {
      const times = scheduleTimes('0 1,1,*/12,12 * * *', zone, new Date('2026-05-29T12:00:00Z'));
      assertTimes(times, previous, next, zone);
    }
  });

  test('an expression that never matches a date is a problem', () => {
    const times = scheduleTimes('0 0 31 2 *', 'UTC', new Date('2026-05-29T12:00:00Z'));
    assert.ok('problem' in times);
    assert.match(times.problem, /never matches a date/);
  });
});
