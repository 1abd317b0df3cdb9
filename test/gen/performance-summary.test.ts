import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import {
  SUMMARY_BEGIN,
  SUMMARY_END,
  renderPerformanceSummary,
  withPerformanceSummary,
} from '#tools/gen/performance-summary';

const dir = mkdtempSync(join(tmpdir(), 'bench-results-'));
after(() => rmSync(dir, { recursive: true, force: true }));

function results(
  file: string,
  size: 'default' | 'quick',
  date: string,
  commit: string,
  scenarios: { name: string; goals: { goal: string; measured: string; met: boolean }[] }[],
  load?: number,
): void {
  const body = {
    date,
    size,
    ...(load === undefined
      ? {}
      : { loadAverage: { before: [load, 0, 0], after: [load + 2, 0, 0] } }),
    command: 'npm run bench',
    machine: { commit, dirty: false },
    scenarios: scenarios.map((s) => ({
      ...s,
      title: s.name,
      command: '',
      seconds: 1,
      settings: {},
      tables: [],
      goals: s.goals.map((g) => ({ ...g, target: '≤ 1' })),
    })),
  };
  writeFileSync(join(dir, file), JSON.stringify(body));
}

describe('the README performance summary', () => {
  results('2026-01-01T0000Z.json', 'default', '2026-01-01T00:00:00Z', 'aaaaaaa1111', [
    { name: 'cold-start', goals: [{ goal: 'throughput', measured: '0.7', met: false }] },
    { name: 'memory', goals: [{ goal: 'memory | per object', measured: '9 KiB', met: true }] },
  ]);
  results(
    '2026-02-01T0000Z.json',
    'default',
    '2026-02-01T00:00:00Z',
    'bbbbbbb2222',
    [{ name: 'cold-start', goals: [{ goal: 'throughput', measured: '0.9', met: true }] }],
    3.14,
  );
  results('2026-03-01T0000Z-quick.json', 'quick', '2026-03-01T00:00:00Z', 'ccccccc3333', [
    { name: 'cold-start', goals: [{ goal: 'throughput', measured: '0.1', met: false }] },
  ]);

  test("takes each scenario's goals from its newest default-size run, with that run's date and commit", () => {
    const table = renderPerformanceSummary(dir);
    assert.match(
      table,
      /\| throughput \| ≤ 1 \| 0\.9 \| yes \| 2026-02-01, `bbbbbbb`, load 3\.1 → 5\.1 \|/,
    );
    assert.match(
      table,
      /\| memory \\\| per object \| ≤ 1 \| 9 KiB \| yes \| 2026-01-01, `aaaaaaa` \|/,
    );
    assert.doesNotMatch(table, /\| 0\.7 \|/, 'the older run of cold-start is replaced');
    assert.doesNotMatch(table, /ccccccc/, 'a --quick run is a smoke run, not a result');
    assert.ok(table.indexOf('bbbbbbb') < table.indexOf('aaaaaaa'), 'newest run first');
  });

  test('a new run makes the README stale until the summary is written again', () => {
    const readme = `# x\n\n${SUMMARY_BEGIN}\n${SUMMARY_END}\n\nafter\n`;
    const current = withPerformanceSummary(readme, renderPerformanceSummary(dir));
    assert.equal(withPerformanceSummary(current, renderPerformanceSummary(dir)), current);
    results('2026-04-01T0000Z.json', 'default', '2026-04-01T00:00:00Z', 'ddddddd4444', [
      { name: 'memory', goals: [{ goal: 'memory | per object', measured: '7 KiB', met: true }] },
    ]);
    const next = withPerformanceSummary(current, renderPerformanceSummary(dir));
    assert.notEqual(next, current);
    assert.match(next, /7 KiB \| yes \| 2026-04-01, `ddddddd`/);
    assert.ok(next.startsWith('# x\n\n') && next.endsWith(`${SUMMARY_END}\n\nafter\n`));
  });

  test('a run named to the second is newer than the runs named to the minute before it', () => {
    // Runs were once named to the minute (`T0959Z`); since then to the second (`T100005Z`).
    results('2026-05-01T0959Z.json', 'default', '2026-05-01T09:59:00Z', 'eeeeeee5555', [
      { name: 'memory', goals: [{ goal: 'memory | per object', measured: '6 KiB', met: true }] },
    ]);
    results('2026-05-01T100005Z.json', 'default', '2026-05-01T10:00:05Z', 'fffffff6666', [
      { name: 'memory', goals: [{ goal: 'memory | per object', measured: '5 KiB', met: true }] },
    ]);
    assert.match(renderPerformanceSummary(dir), /5 KiB \| yes \| 2026-05-01, `fffffff`/);
  });

  test('a README without the markers is an error that names them', () => {
    assert.throws(() => withPerformanceSummary('# x\n', 'table'), /performance summary/);
  });
});
