import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { startRedisDeployment } from '#testing';
import { scrape, sumOf } from '../lib/prom.js';
import { cpuSeconds } from '../lib/proc.js';
import type { Goal, Table } from '../lib/result.js';
import { round, summarize } from '../lib/stats.js';
import { waitForProgress, withWorld } from '../env/world.js';
import { dist, spawnNode, trackedSystem, type OperatorProcess } from '../env/system.js';
import { compareBuild, type BenchContext, type Scenario } from './context.js';

/** How a system under test is started; the operator's first one is what ships. */
interface Variant {
  readonly label: string;
  readonly kind: 'operator' | 'baseline';
  /** node arguments for an app (its entry file, or what stands for it). */
  entry(app: 'watcher' | 'worker'): string | readonly string[];
  readonly env?: Record<string, string>;
  /**
   * Each process spawned once the one before it is ready, the watcher first: what one start costs
   * when it has the machine to itself, as when an autoscaler adds a worker or a watcher fails over.
   */
  readonly oneAtATime?: boolean;
}

const ONE_AT_A_TIME = 'operator, one process at a time';

/** The apps' tsc output run directly, as every process started before the bundle. */
const modulesEntry = (app: string): readonly string[] => [
  '--input-type=module',
  '-e',
  `const { start } = await import(${JSON.stringify(pathToFileURL(dist(`apps/${app}/src/app.js`)).href)}); await start();`,
];

const VARIANTS: readonly Variant[] = [
  { label: 'operator', kind: 'operator', entry: (app) => dist(`apps/${app}/src/main.js`) },
  {
    label: ONE_AT_A_TIME,
    kind: 'operator',
    entry: (app) => dist(`apps/${app}/src/main.js`),
    oneAtATime: true,
  },
  {
    label: 'operator, code cache off',
    kind: 'operator',
    entry: (app) => dist(`apps/${app}/src/main.js`),
    env: { NODE_DISABLE_COMPILE_CACHE: '1' },
  },
  { label: 'operator, tsc modules (no bundle)', kind: 'operator', entry: modulesEntry },
  { label: 'baseline', kind: 'baseline', entry: () => dist('bench/baseline/main.js') },
];

/** The operator of another build, started as that build starts itself (its apps' main.js). */
function buildVariant(spec: string): Variant {
  const { dir, label } = compareBuild(spec);
  return {
    label: `operator of ${label}`,
    kind: 'operator',
    entry: (app) => join(dir, 'apps', app, 'src', 'main.js'),
  };
}

interface ProcessStart {
  readonly name: string;
  /** ms from spawn until it answered /readyz with 200 (the baseline: logged "informers synced"). */
  readonly readyMs: number;
  /** CPU ms it had used by then. */
  readonly cpuMs: number;
}

export interface StartUpRun {
  readonly system: string;
  readonly run: number;
  readonly processes: readonly ProcessStart[];
  /** ms from the first spawn until the BackupJob was stored Ready=True. */
  readonly firstReadyMs: number;
}

const POLL_MS = 10;

/** Polls until `check` holds; resolves with Date.now() then, and the process's CPU ms. */
async function whenReady(p: OperatorProcess, timeoutMs: number): Promise<ProcessStart> {
  const pid = p.proc.child.pid ?? 0;
  const done = (): ProcessStart => ({
    name: p.name,
    readyMs: Date.now() - p.spawnedAt,
    cpuMs: Math.round(cpuSeconds(pid) * 1000),
  });
  if (p.role === 'baseline') {
    await p.proc.waitForLine(/informers synced/, timeoutMs);
    return done();
  }
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const ok = await fetch(`${p.healthUrl}/readyz`)
      .then(async (r) => (await r.arrayBuffer(), r.ok))
      .catch(() => false);
    if (ok) {
      const start = done();
      // The watcher is ready as leader or standby; it is the only one, so it must lead.
      if (p.role !== 'watcher') return start;
      const leading = sumOf(await scrape(p.metricsUrl), 'leader_election_master_status') >= 1;
      if (leading) return start;
    }
    if (!p.proc.running)
      throw new Error(`${p.name} exited:\n${p.proc.lines.slice(-10).join('\n')}`);
    if (Date.now() > deadline) throw new Error(`${p.name} not ready within ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, POLL_MS));
  }
}

/** One start: a fresh API server with one BackupJob, the system spawned at once or one by one. */
async function startOnce(ctx: BenchContext, variant: Variant, run: number): Promise<StartUpRun> {
  const { latencyMs, workers, capSeconds } = ctx.size.startUp;
  // Over HTTPS, as a cluster is reached: a start includes its TLS handshakes, and the build
  // trains the apps' code caches on that path (tools/code-cache).
  return withWorld({ latencyMs, objects: 1, tls: true }, async (emu) => {
    // Redis, like the API server, is running before the operator is (re)started.
    const redis =
      variant.kind === 'operator' ? await startRedisDeployment('standalone') : undefined;
    const common = { kubeconfigPath: emu.kubeconfigPath };
    const env = {
      ...variant.env,
      ...(redis && {
        ...redis.env,
        QUEUE_SHARDS: String(ctx.size.shards),
        LEADER_ELECTION_NAMESPACE: 'default',
        POD_NAMESPACE: 'default',
      }),
    };
    const spawnOperator = (role: 'watcher' | 'worker', name: string) =>
      spawnNode(role, name, variant.entry(role), env, { ...common, health: true });
    const names = ['watcher', ...Array.from({ length: workers }, (_, i) => `worker-${i}`)];
    const roleOf = (name: string) => (name === 'watcher' ? 'watcher' : 'worker');
    const capMs = capSeconds * 1000;
    let processes: OperatorProcess[] = [];
    // Set when the processes started one after another; the others are timed below, together.
    let starts: ProcessStart[] | undefined;
    try {
      if (variant.kind === 'baseline') {
        processes = [
          await spawnNode(
            'baseline',
            'baseline',
            variant.entry('worker'),
            { ...env, CONCURRENCY: '10' },
            common,
          ),
        ];
      } else if (variant.oneAtATime) {
        processes = [];
        starts = [];
        for (const name of names) {
          const p = await spawnOperator(roleOf(name), name);
          processes.push(p);
          starts.push(await whenReady(p, capMs));
        }
      } else {
        processes = await Promise.all(names.map((name) => spawnOperator(roleOf(name), name)));
      }
    } catch (err) {
      await Promise.all(processes.map((p) => p.proc.stop('SIGKILL')));
      await redis?.stop();
      throw err;
    }
    const system = trackedSystem(variant.label, processes, redis);
    const t0 = Math.min(...processes.map((p) => p.spawnedAt));
    try {
      const [ready, first] = await Promise.all([
        starts ?? Promise.all(processes.map((p) => whenReady(p, capMs))),
        waitForProgress(emu, (p) => p.ready >= 1, capMs, POLL_MS),
      ]);
      if (!first.finished)
        throw new Error(`${variant.label}: no BackupJob Ready within ${capMs} ms`);
      const result = {
        system: variant.label,
        run,
        processes: ready,
        firstReadyMs: first.progress.lastReadyAt - t0,
      };
      ctx.log(
        `start-up ${variant.label} #${run}: ${ready.map((s) => `${s.name} ${s.readyMs} ms`).join(', ')}; first Ready ${result.firstReadyMs} ms`,
      );
      return result;
    } finally {
      await system.stop();
    }
  });
}

/** "min / median / max" of whole milliseconds. */
function spread(values: readonly number[]): string {
  const s = summarize(values);
  return `${Math.round(s.min)} / ${Math.round(s.p50)} / ${Math.round(s.max)}`;
}

const median = (values: readonly number[]) => summarize(values).p50;

function processTable(runs: readonly StartUpRun[]): Table {
  const rows: Table['rows'][number][] = [];
  for (const system of [...new Set(runs.map((r) => r.system))]) {
    const mine = runs.filter((r) => r.system === system);
    for (const name of mine[0]!.processes.map((p) => p.name)) {
      const starts = mine.map((r) => r.processes.find((p) => p.name === name)!);
      rows.push({
        system,
        process: name,
        ready: spread(starts.map((s) => s.readyMs)),
        cpu: spread(starts.map((s) => s.cpuMs)),
      });
    }
  }
  return {
    title: `Spawn → process ready (min / median / max over ${runs.filter((r) => r.system === runs[0]?.system).length} runs)`,
    columns: [
      { key: 'system', label: 'system' },
      { key: 'process', label: 'process' },
      { key: 'ready', label: 'spawn → ready (ms)' },
      { key: 'cpu', label: 'CPU used by then (ms)' },
    ],
    rows,
  };
}

function firstReadyTable(runs: readonly StartUpRun[]): Table {
  return {
    title: 'Spawn of every process → the first BackupJob Ready (min / median / max)',
    columns: [
      { key: 'system', label: 'system' },
      { key: 'first', label: 'spawn → first Ready (ms)' },
      { key: 'slowest', label: 'slowest process ready (ms)' },
    ],
    rows: [...new Set(runs.map((r) => r.system))].map((system) => {
      const mine = runs.filter((r) => r.system === system);
      return {
        system,
        first: spread(mine.map((r) => r.firstReadyMs)),
        slowest: spread(mine.map((r) => Math.max(...r.processes.map((p) => p.readyMs)))),
      };
    }),
  };
}

/** The goal on each process's start: the slowest process's median spawn → ready. */
function eachReadyGoal(runs: readonly StartUpRun[], system: string, goal: string): Goal[] {
  const mine = runs.filter((r) => r.system === system);
  if (mine.length === 0) return [];
  const slowest = mine[0]!.processes
    .map(({ name }) => ({
      name,
      ms: median(mine.map((r) => r.processes.find((p) => p.name === name)!.readyMs)),
    }))
    .reduce((a, b) => (b.ms > a.ms ? b : a));
  return [
    {
      goal,
      target: '≤ 500 ms',
      measured: `slowest ${slowest.name} ${Math.round(slowest.ms)} ms`,
      met: slowest.ms <= 500,
      note: slowest.ms <= 500 ? undefined : `over by ${Math.round(slowest.ms - 500)} ms`,
    },
  ];
}

function goals(runs: readonly StartUpRun[]): Goal[] {
  const shipped = runs.filter((r) => r.system === VARIANTS[0]!.label);
  if (shipped.length === 0) return [];
  const out: Goal[] = [
    ...eachReadyGoal(
      runs,
      VARIANTS[0]!.label,
      'each operator process ready after spawn, all spawned at once (median)',
    ),
    ...eachReadyGoal(
      runs,
      ONE_AT_A_TIME,
      'each operator process ready after spawn, spawned one at a time (median)',
    ),
  ];
  const first = median(shipped.map((r) => r.firstReadyMs));
  out.push({
    goal: 'spawn of 1 watcher + 2 workers → first BackupJob Ready (median)',
    target: '≤ 1500 ms',
    measured: `${Math.round(first)} ms`,
    met: first <= 1500,
    note: first <= 1500 ? undefined : `over by ${Math.round(first - 1500)} ms`,
  });
  const baseline = runs.filter((r) => r.system === 'baseline');
  if (baseline.length > 0) {
    const theirs = median(baseline.map((r) => r.firstReadyMs));
    out.push({
      goal: "first BackupJob Ready ahead of the baseline's (median)",
      target: `< baseline's ${Math.round(theirs)} ms`,
      measured: `${Math.round(first)} ms (${round(first / theirs)}× the baseline's)`,
      met: first < theirs,
      note: first < theirs ? undefined : `behind by ${Math.round(first - theirs)} ms`,
    });
  }
  return out;
}

export const startUpScenario: Scenario = {
  name: 'start-up',
  title: 'Start-up: spawn → ready, and → the first BackupJob Ready',
  async run(ctx) {
    const { runs: count, latencyMs, workers, capSeconds } = ctx.size.startUp;
    const variants = [...VARIANTS, ...ctx.compareBuilds.map(buildVariant)].filter((v) =>
      ctx.systems.has(v.kind),
    );
    const runs: StartUpRun[] = [];
    // Round by round, every system once, so that a machine slowing down in between weighs on all
    // of them alike.
    for (let run = 1; run <= count; run++) {
      for (const variant of variants) runs.push(await startOnce(ctx, variant, run));
    }
    return {
      settings: {
        runs: count,
        latencyMs,
        workers,
        objects: 1,
        capSeconds,
        pollMs: POLL_MS,
        compareBuilds: ctx.compareBuilds,
      },
      tables: [processTable(runs), firstReadyTable(runs)],
      goals: goals(runs),
      notes: [
        `Each run starts from a fresh API emulator serving HTTPS, as a cluster's API server does (since 2026-12-08; plain HTTP before), holding one BackupJob (${latencyMs} ms mean latency) and, for the operator, a running Redis; the processes are spawned at once, except in the row "${ONE_AT_A_TIME}": there the watcher comes first and each worker is spawned once the process before it is ready, so each start has the 2 cores to itself, as when an autoscaler adds a worker or a watcher takes over (its first Ready comes after the watcher's whole start). A process is ready when /readyz answers 200 (the watcher also leads), polled every ${POLL_MS} ms; the baseline when it logs "informers synced". First Ready is the time the API server stored the BackupJob's Ready=True. CPU is user + system time from /proc at that moment.`,
        'The operator is what ships: each app started by `node dist/apps/<app>/src/main.js`, which loads its bundle with the code cache that `npm run build` made beside it. The other operator rows take one lever away each: the code cache (NODE_DISABLE_COMPILE_CACHE=1, which the launcher honours), or the bundle (the tsc output of apps/<app>/src/app.ts, as every process started before).',
      ],
      raw: { runs },
    };
  },
};
