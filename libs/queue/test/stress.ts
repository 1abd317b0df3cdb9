/**
 * The cross-process stress test of the queue contract, shared by the test suite (CI size) and the
 * benchmark (larger size). The checks use only what the consumers print and a per-key version
 * counter, never the queue's own bookkeeping, so a queue bug cannot hide itself.
 */
import { fileURLToPath } from 'node:url';
import { setTimeout as sleep } from 'node:timers/promises';
import { startProcess, type ManagedProcess } from '#testing';
import { shardKeys, WorkQueue, type QueueOptions } from '../src/index.js';
import { parseJobId } from '../src/job-ids.js';
import type { Backend } from './support.js';
import type { ConsumerProcessConfig } from './consumer-process.js';

export interface StressOptions {
  adds: number;
  keys: number;
  consumers: number;
  shards: number;
  concurrency: number;
  producerLanes: number;
  maxRunMs: number;
  lockDurationMs: number;
  /** Whether to SIGKILL one consumer mid-run halfway through (a replacement joins). */
  kill: boolean;
}

export interface StressReport {
  adds: number;
  runs: number;
  completedRuns: number;
  outcomes: Record<string, number>;
  /** A run found the key's marker already set: two runs of one key at once. */
  markerViolations: number;
  /** Two runs of one key whose start..end intervals overlap. */
  overlaps: number;
  /** Samples in which a key was both waiting and running. */
  sampleViolations: number;
  samples: number;
  /** Keys whose last add was not followed by a completed run that saw its version. */
  lostUpdates: number;
  /** Runs open on the killed consumer, and how many of their keys ran again elsewhere after. */
  killedOpenRuns: number;
  recoveredAfterKill: number;
  /** adds / runs: how many adds one run absorbed. */
  coalescingRatio: number;
  durationMs: number;
}

interface RunRecord {
  key: string;
  process: string;
  version: number;
  start: number;
  end: number | undefined;
  outcome: string | undefined;
}

const entry = fileURLToPath(new URL('./consumer-process.js', import.meta.url));

export async function runStress(backend: Backend, options: StressOptions): Promise<StressReport> {
  const started = Date.now();
  const name = `stress-${process.pid}-${started}`;
  const queueOptions: QueueOptions = {
    name,
    connection: backend.connection,
    shards: options.shards,
    lockDurationMs: options.lockDurationMs,
    backoff: { baseMs: 5, maxMs: 200 },
    resetCheckIntervalMs: 1_000,
  };
  const config: ConsumerProcessConfig = {
    queue: queueOptions,
    concurrency: options.concurrency,
    maxRunMs: options.maxRunMs,
    errorRate: 0.1,
    requeueRate: 0.1,
    terminalRate: 0.02,
    requeueAfterMs: [20, 100],
    longRunRate: 0.01,
    longRunMs: 300,
  };
  const data = backend.client();
  const queue = new WorkQueue(queueOptions);
  const consumers: ManagedProcess[] = [];
  const startConsumer = async (): Promise<ManagedProcess> => {
    const consumer = startProcess({
      name: `consumer-${consumers.length}`,
      command: process.execPath,
      args: [entry, JSON.stringify(config)],
    });
    consumers.push(consumer);
    await consumer.waitForLine(/^ready$/);
    return consumer;
  };
  try {
    for (let i = 0; i < options.consumers; i++) await startConsumer();
    const lastAdd = new Map<string, number>();
    let killed: { process: ManagedProcess; at: number } | undefined;
    const sampler = startSampler(backend, name, options.shards);

    /** Like a watcher: the object changes (its version), then its key is added. */
    const change = async (key: string, how: 'add' | 'low' | 'after'): Promise<void> => {
      await data.incr(`ver:${key}`);
      lastAdd.set(key, Date.now());
      if (how === 'add') await queue.add(key);
      else if (how === 'low') await queue.add(key, { priority: 'low' });
      else await queue.addAfter(key, 10 + Math.random() * 190);
    };
    let issued = 0;
    let killing: Promise<void> | undefined;
    const lane = async (): Promise<void> => {
      while (issued < options.adds) {
        issued++;
        if (options.kill && !killing && issued >= options.adds / 2) {
          const victim = consumers[0] as ManagedProcess;
          killing = killMidRun(victim, (key) => change(key, 'add')).then(async (at) => {
            killed = { process: victim, at };
            await startConsumer();
          });
        }
        const key = `ns-${issued % 3}/obj-${Math.floor(Math.random() * options.keys)}`;
        const dice = Math.random();
        await change(key, dice < 0.85 ? 'add' : dice < 0.9 ? 'low' : 'after');
      }
    };
    await Promise.all(Array.from({ length: options.producerLanes }, lane));
    await killing;
    await waitForQuiescence(queue, consumers, killed?.process);
    const { violations: sampleViolations, samples } = await sampler.stop();
    await Promise.all(consumers.filter((c) => c.running).map((c) => c.stop('SIGTERM')));

    const runs = parseRuns(consumers, killed);
    const versions = new Map<string, number>();
    for (const key of lastAdd.keys()) versions.set(key, Number(await data.get(`ver:${key}`)));
    const outcomes: Record<string, number> = {};
    for (const run of runs)
      outcomes[run.outcome ?? 'killed'] = (outcomes[run.outcome ?? 'killed'] ?? 0) + 1;
    const completed = runs.filter((r) => ['ok', 'after', 'terminal'].includes(r.outcome ?? ''));
    const killedOpen = killed
      ? runs.filter((r) => r.process === killed?.process.name && !r.outcome)
      : [];
    return {
      adds: options.adds,
      runs: runs.length,
      completedRuns: completed.length,
      outcomes,
      markerViolations: consumers.reduce(
        (n, c) => n + c.lines.filter((l) => l.startsWith('V ')).length,
        0,
      ),
      overlaps: countOverlaps(runs),
      sampleViolations,
      samples,
      lostUpdates: countLostUpdates(completed, versions, lastAdd),
      killedOpenRuns: killedOpen.length,
      recoveredAfterKill: killedOpen.filter((open) =>
        runs.some(
          (r) => r.key === open.key && r.process !== open.process && r.start >= (killed?.at ?? 0),
        ),
      ).length,
      coalescingRatio: runs.length === 0 ? 0 : options.adds / runs.length,
      durationMs: Date.now() - started,
    };
  } finally {
    await Promise.all(consumers.filter((c) => c.running).map((c) => c.stop('SIGKILL')));
    await queue.close();
  }
}

/**
 * SIGKILLs the consumer inside a run: once it has a `slow/` run (300 ms) that started 20 to 150 ms
 * ago, far from its end even on a loaded machine. `slow/` keys are added until it takes one, so
 * the kill does not depend on chance.
 */
async function killMidRun(
  consumer: ManagedProcess,
  add: (key: string) => Promise<void>,
): Promise<number> {
  const deadline = Date.now() + 60_000;
  const midRun = ({ key, start }: OpenRun) =>
    key.startsWith('slow/') && Date.now() - start >= 20 && Date.now() - start <= 150;
  for (let slow = 0; Date.now() < deadline; slow++) {
    if ([...openRuns(consumer).values()].some(midRun)) break;
    if (slow % 10 === 0) await add(`slow/${slow / 10}`);
    await sleep(5);
  }
  consumer.child.kill('SIGKILL');
  await consumer.exited;
  return Date.now();
}

interface OpenRun {
  key: string;
  start: number;
}

/** Runs that printed S but no E yet, by run id, with their key and start time. */
function openRuns(consumer: ManagedProcess): Map<string, OpenRun> {
  const open = new Map<string, OpenRun>();
  for (const line of consumer.lines) {
    const [tag, key, runId, , time] = line.split(' ');
    if (tag === 'S') open.set(runId as string, { key: key as string, start: Number(time) });
    else if (tag === 'E') open.delete(runId as string);
  }
  return open;
}

async function waitForQuiescence(
  queue: WorkQueue,
  consumers: ManagedProcess[],
  killed: ManagedProcess | undefined,
): Promise<void> {
  const deadline = Date.now() + 90_000;
  for (;;) {
    const depth = await queue.depth();
    const busy = depth.some((d) => d.ready + d.delayed + d.running > 0);
    const open = consumers.some((c) => c !== killed && openRuns(c).size > 0);
    if (!busy && !open) return;
    if (Date.now() > deadline) throw new Error(`queue did not drain: ${JSON.stringify(depth)}`);
    await sleep(100);
  }
}

function parseRuns(
  consumers: ManagedProcess[],
  killed: { process: ManagedProcess; at: number } | undefined,
): RunRecord[] {
  const runs: RunRecord[] = [];
  for (const consumer of consumers) {
    const byId = new Map<string, RunRecord>();
    for (const line of consumer.lines) {
      const [tag, key, runId, value, time] = line.split(' ') as string[];
      if (tag === 'S') {
        const run: RunRecord = {
          key: key as string,
          process: consumer.name,
          version: Number(value),
          start: Number(time),
          end: undefined,
          outcome: undefined,
        };
        byId.set(runId as string, run);
        runs.push(run);
      } else if (tag === 'E') {
        const run = byId.get(runId as string);
        if (run) {
          run.end = Number(time);
          run.outcome = value;
        }
      }
    }
  }
  // A run cut short by SIGKILL ended when its process died.
  for (const run of runs) {
    if (run.end === undefined && killed && run.process === killed.process.name) run.end = killed.at;
  }
  return runs;
}

/** Pairs of runs of one key whose intervals intersect (an unfinished run never ends). */
function countOverlaps(runs: RunRecord[]): number {
  const byKey = new Map<string, RunRecord[]>();
  for (const run of runs) byKey.set(run.key, [...(byKey.get(run.key) ?? []), run]);
  let overlaps = 0;
  for (const keyRuns of byKey.values()) {
    keyRuns.sort((a, b) => a.start - b.start);
    let lastEnd = -Infinity;
    for (const run of keyRuns) {
      if (run.start < lastEnd) overlaps++;
      lastEnd = Math.max(lastEnd, run.end ?? Infinity);
    }
  }
  return overlaps;
}

/**
 * A key lost an update if no completed run saw its final version, or none started after its last
 * add was issued (the version is bumped before the add, as a watch event follows a write).
 */
function countLostUpdates(
  completed: RunRecord[],
  versions: Map<string, number>,
  lastAdd: Map<string, number>,
): number {
  let lost = 0;
  for (const [key, version] of versions) {
    const runs = completed.filter((r) => r.key === key);
    const seen = Math.max(0, ...runs.map((r) => r.version));
    const lastStart = Math.max(0, ...runs.map((r) => r.start));
    if (seen < version || lastStart < (lastAdd.get(key) ?? 0)) lost++;
  }
  return lost;
}

/**
 * Samples every shard atomically: a key must never have a run waiting (BullMQ wait or
 * prioritized) while one of its runs is active.
 */
function startSampler(backend: Backend, name: string, shards: number) {
  const client = backend.client();
  let violations = 0;
  let samples = 0;
  let running = true;
  const runKeys = (ids: string[] | undefined): string[] =>
    (ids ?? []).flatMap((id) => {
      const parsed = parseJobId(id);
      return parsed?.kind === 'run' ? [parsed.key] : [];
    });
  const loop = (async () => {
    while (running) {
      for (let shard = 0; shard < shards; shard++) {
        const keys = shardKeys('wq', name, shard);
        const replies = await client
          .multi()
          .lrange(keys.wait, 0, -1)
          .zrange(keys.prioritized, '0', '-1')
          .lrange(keys.active, 0, -1)
          .exec();
        const [wait, prioritized, active] = (replies ?? []).map(([, v]) => v as string[]);
        const running = new Set(runKeys(active));
        violations += [...runKeys(wait), ...runKeys(prioritized)].filter((k) =>
          running.has(k),
        ).length;
        samples++;
      }
      await sleep(50);
    }
  })();
  return {
    async stop() {
      running = false;
      await loop;
      client.disconnect();
      return { violations, samples };
    },
  };
}
