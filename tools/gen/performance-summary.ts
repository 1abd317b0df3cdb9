import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { BenchResults, Goal } from '#bench/lib/result';

export const SUMMARY_BEGIN =
  '<!-- performance summary: `npm run gen` writes it from bench/results/*.json; do not edit -->';
export const SUMMARY_END = '<!-- end of performance summary -->';

/** One scenario's goals as its newest default-size run measured them. */
interface Measured {
  readonly scenario: string;
  readonly file: string;
  readonly date: string;
  readonly commit: string;
  readonly dirty: boolean;
  /** 1-minute load averages before and after the run: other work on the machine. */
  readonly load:
    { readonly before: readonly number[]; readonly after: readonly number[] } | undefined;
  readonly goals: readonly Goal[];
}

/**
 * The goals of every scenario, each from the newest default-size run of that scenario that
 * finished it (a run may cover only some scenarios; `--quick` runs are smoke runs and left out),
 * newest run first. A goal two scenarios measure is taken from the newer run.
 */
function latestGoals(resultsDir: string): Measured[] {
  if (!existsSync(resultsDir)) return [];
  const files = readdirSync(resultsDir)
    .filter((f) => f.endsWith('.json'))
    .sort()
    .reverse();
  const seen = new Set<string>();
  const goalsSeen = new Set<string>();
  const out: Measured[] = [];
  for (const file of files) {
    const results = JSON.parse(readFileSync(join(resultsDir, file), 'utf8')) as BenchResults;
    if (results.size !== 'default') continue;
    for (const scenario of results.scenarios) {
      if (seen.has(scenario.name) || scenario.error) continue;
      seen.add(scenario.name);
      const goals = (scenario.goals ?? []).filter((g) => !goalsSeen.has(g.goal));
      for (const g of goals) goalsSeen.add(g.goal);
      if (goals.length === 0) continue;
      out.push({
        scenario: scenario.name,
        file,
        date: results.date.slice(0, 10),
        commit: results.machine.commit.slice(0, 7),
        dirty: results.machine.dirty,
        load: results.loadAverage,
        goals,
      });
    }
  }
  return out;
}

const cell = (text: string) => text.replace(/\|/g, '\\|').replace(/\n/g, ' ');

/** The README's table of goals: what each targets, what was measured, in which run. */
export function renderPerformanceSummary(resultsDir: string): string {
  const measured = latestGoals(resultsDir);
  if (measured.length === 0) return 'No default-size bench run is recorded in bench/results.\n';
  const rows = measured.flatMap((m) =>
    m.goals.map((g) => {
      const met = g.met === null ? 'not measured' : g.met ? 'yes' : '**no**';
      const load = m.load
        ? `, load ${m.load.before[0]!.toFixed(1)} → ${m.load.after[0]!.toFixed(1)}`
        : '';
      const run = `${m.date}, \`${m.commit}\`${m.dirty ? ' + changes' : ''}${load}`;
      return `| ${cell(g.goal)} | ${cell(g.target)} | ${cell(g.measured)} | ${met} | ${run} |`;
    }),
  );
  const runs = [...new Set(measured.map((m) => `\`bench/results/${m.file}\``))];
  return [
    `Each goal as the newest default-size run of its scenario measured it (${runs.join(', ')}):`,
    '',
    '| goal | target | measured | met | run (date, commit, 1-minute load average before → after, 2 cores) |',
    '| --- | --- | --- | --- | --- |',
    ...rows,
    '',
  ].join('\n');
}

/** `readme` with the text between the summary's two markers replaced by `summary`. */
export function withPerformanceSummary(readme: string, summary: string): string {
  const begin = readme.indexOf(SUMMARY_BEGIN);
  const end = readme.indexOf(SUMMARY_END);
  if (begin < 0 || end < begin) {
    throw new Error(`README.md must hold the lines ${SUMMARY_BEGIN} and ${SUMMARY_END}, in order`);
  }
  return `${readme.slice(0, begin + SUMMARY_BEGIN.length)}\n\n${summary}\n${readme.slice(end)}`;
}
