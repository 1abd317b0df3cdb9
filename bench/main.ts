/**
 * `npm run bench [-- --quick] [-- --scenario <name>[,<name>]] [-- --systems operator,baseline]`
 * `[-- --compare-build [<label>=]<dist of another build>]` (the start-up scenario starts it too)
 * Runs the scenarios, prints a table per scenario, writes bench/results/<date>.json and
 * regenerates docs/performance.md with its SVG charts.
 */
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { join, relative, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { describeMachine } from './lib/machine.js';
import { writeReport, textTable } from './lib/report.js';
import type { BenchResults, ScenarioResult } from './lib/result.js';
import { stopAllSystems } from './env/system.js';
import { SIZES } from './sizes.js';
import { SCENARIOS } from './scenarios/index.js';
import { latencyBoundScenario } from './scenarios/cold-start.js';
import type { BenchContext, Scenario, SystemKind } from './scenarios/context.js';

// The apps need Node 24 (package.json engines); every child runs on this same node binary.
if (Number(process.versions.node.split('.')[0]) < 24) {
  console.error(`npm run bench needs Node 24 or later, this is ${process.version}`);
  process.exit(2);
}

const { values } = parseArgs({
  options: {
    quick: { type: 'boolean', default: false },
    scenario: { type: 'string', multiple: true },
    systems: { type: 'string', default: 'operator,baseline' },
    'results-dir': { type: 'string', default: 'bench/results' },
    'docs-dir': { type: 'string', default: 'docs' },
    'compare-build': { type: 'string', multiple: true },
  },
});

const size = SIZES[values.quick ? 'quick' : 'default'];
const wanted = (values.scenario ?? []).flatMap((s) => s.split(',')).filter(Boolean);
const known = SCENARIOS.map((s) => s.name);
for (const name of wanted) {
  if (!known.includes(name)) {
    console.error(`--scenario: unknown "${name}"; one of ${known.join(', ')}`);
    process.exit(2);
  }
}
const systems = new Set(values.systems.split(',').map((s) => s.trim())) as Set<SystemKind>;
for (const s of systems) {
  if (s !== 'operator' && s !== 'baseline') {
    console.error(`--systems: unknown "${s}"; operator and/or baseline`);
    process.exit(2);
  }
}

for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => {
    process.stderr.write(`[bench] ${signal}: stopping the systems under test\n`);
    void stopAllSystems().finally(() => process.exit(130));
  });
}

const started = Date.now();
const loadBefore = loadavg();
const log = (message: string) => {
  const t = ((Date.now() - started) / 1000).toFixed(0).padStart(5);
  process.stderr.write(`[bench ${t}s] ${message}\n`);
};
const ctx: BenchContext = {
  size,
  systems,
  log,
  baselineBest: new Map(),
  compareBuilds: (values['compare-build'] ?? []).map((spec) =>
    spec.includes('=')
      ? spec.replace(/=(.*)/s, (_, dir: string) => `=${resolve(dir)}`)
      : resolve(spec),
  ),
};
const argv = process.argv.slice(2).join(' ');
const command = `npm run bench${argv ? ` -- ${argv}` : ''}`;

// The cold start already includes the latency-bound runs; that scenario runs only when named.
const selected = SCENARIOS.filter((s) =>
  wanted.length === 0 ? s.name !== latencyBoundScenario.name : wanted.includes(s.name),
);
const runDate = new Date();
// To the second: two short runs started within one minute must not share a file, the second
// overwriting the first. Names still sort in time order, which the README's table relies on.
const stamp = runDate.toISOString().slice(0, 19).replace(/:/g, '');
const resultsDir = values['results-dir'];
mkdirSync(resultsDir, { recursive: true });
const file = join(resultsDir, `${stamp}Z${size.name === 'quick' ? '-quick' : ''}.json`);
if (existsSync(file)) {
  console.error(`${file} exists: another bench run started this second; start again`);
  process.exit(2);
}
const machine = describeMachine();

/**
 * Written after every scenario, so a run stopped before its end still leaves the numbers of the
 * scenarios it finished, marked as a partial run.
 */
function save(results: readonly ScenarioResult[]): void {
  const bench: BenchResults = {
    date: runDate.toISOString(),
    size: size.name,
    command,
    machine,
    systems: [...systems],
    seconds: (Date.now() - started) / 1000,
    loadAverage: { before: loadBefore, after: loadavg() },
    notRun: selected.slice(results.length).map((s) => s.name),
    scenarios: results,
  };
  writeFileSync(file, `${JSON.stringify(bench, null, 2)}\n`);
  writeReport(bench, values['docs-dir'], relative(process.cwd(), file));
}

async function runScenario(scenario: Scenario): Promise<ScenarioResult> {
  log(`scenario ${scenario.name} (${size.name})`);
  const t0 = Date.now();
  const base = {
    name: scenario.name,
    title: scenario.title,
    command: `npm run bench -- ${size.name === 'quick' ? '--quick ' : ''}--scenario ${scenario.name}`,
  };
  try {
    const out = await scenario.run(ctx);
    return { ...out, ...base, seconds: (Date.now() - t0) / 1000 };
  } catch (err) {
    log(
      `scenario ${scenario.name} failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`,
    );
    return {
      ...base,
      seconds: (Date.now() - t0) / 1000,
      settings: {},
      tables: [],
      error: err instanceof Error ? err.message : String(err),
    };
  }
}

function print(result: ScenarioResult): void {
  for (const t of result.tables) {
    if (t.rows.length === 0) continue;
    process.stdout.write(
      `\n== ${result.title}${t.title ? ` — ${t.title}` : ''}\n${textTable(t)}\n`,
    );
  }
  for (const g of result.goals ?? []) {
    process.stdout.write(
      `goal: ${g.goal}: ${g.measured} (target ${g.target}) ${g.met ? 'met' : 'MISSED'}\n`,
    );
  }
}

const results: ScenarioResult[] = [];
for (const scenario of selected) {
  const result = await runScenario(scenario);
  results.push(result);
  print(result);
  save(results);
}
log(
  `wrote ${file} and ${join(values['docs-dir'], 'performance.md')} in ${Math.round((Date.now() - started) / 1000)} s; \`npm run gen\` puts its goals in README.md's table`,
);
process.exit(results.some((r) => r.error) ? 1 : 0);
