/**
 * Queue benchmark: the sharded key queue against raw BullMQ (add + no-op process), in the same
 * run on the same private Redis, with 1, 2 and 4 consumer processes; then the cross-process
 * stress test at a size larger than CI's.
 *
 *   node dist/bench/queue/main.js [--quick]
 *
 * `runQueueBench` returns a ScenarioOutput, so the top-level bench can include it as a scenario.
 */
import { fileURLToPath, pathToFileURL } from 'node:url';
import { setTimeout as sleep } from 'node:timers/promises';
import { parseArgs } from 'node:util';
import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import { startProcess, type ManagedProcess, startRedisServer, type RedisServer } from '#testing';
import { WorkQueue, type QueueOptions } from '#queue';
import { startBackend } from '#queue/test/support';
import { runStress, type StressReport } from '#queue/test/stress';
import { parseCommandStats, totals } from '../lib/redis-stats.js';
import { textTable } from '../lib/report.js';
import type { Goal, ScenarioOutput, Table } from '../lib/result.js';
import { round, summarize } from '../lib/stats.js';
import type { BenchConsumerConfig } from './consumer.js';

export interface QueueBenchOptions {
  quick: boolean;
  log?: (message: string) => void;
}

type Kind = BenchConsumerConfig['kind'];

interface Measurement {
  kind: Kind;
  consumers: number;
  keys: number;
  seconds: number;
  keysPerSecond: number;
  latencyP50: number;
  latencyP99: number;
  commandsPerKey: number;
  scriptCallsPerKey: number;
  redisCpuMicrosPerKey: number;
  /** CPU time of the producer and every consumer process, per key. */
  clientCpuMicrosPerKey: number;
  /** add→start at a steady rate well below saturation, where latency is the queue's, not a backlog's. */
  pacedP50: number;
  pacedP99: number;
}

interface Run {
  seconds: number;
  latencies: number[];
  commands: number;
  scripts: number;
  redisCpuSeconds: number;
  clientCpuMicros: number;
}

const consumerEntry = fileURLToPath(new URL('./consumer.js', import.meta.url));
const producerInFlight = 50;
const concurrency = 10;
const shards = 8;
const pacedRate = 500;

export async function runQueueBench(options: QueueBenchOptions): Promise<ScenarioOutput> {
  const log = options.log ?? ((m: string) => process.stderr.write(`[queue bench] ${m}\n`));
  const keys = options.quick ? 2_000 : 20_000;
  const paced = options.quick ? 500 : 2_000;
  const redis = await startRedisServer();
  const measurements: Measurement[] = [];
  try {
    for (const consumers of [1, 2, 4]) {
      for (const kind of ['bullmq', 'queue'] as Kind[]) {
        log(`${kind}: ${keys} keys, ${consumers} consumer process(es)`);
        measurements.push(await measure(redis, kind, consumers, keys, paced));
      }
    }
  } finally {
    await redis.stop();
  }
  log('stress test');
  const stress = await stressAtSize(options.quick);
  return report(measurements, stress, keys);
}

async function measure(
  redis: RedisServer,
  kind: Kind,
  consumers: number,
  keys: number,
  paced: number,
): Promise<Measurement> {
  const name = `bench-${kind}-${consumers}`;
  const queueOptions: QueueOptions = { name, connection: { url: redis.url }, shards };
  const config: BenchConsumerConfig = {
    kind,
    queue: queueOptions,
    bullmq: { name, prefix: 'bull', url: redis.url },
    concurrency,
  };
  const admin = new Redis(redis.url);
  const producer = kind === 'queue' ? new WorkQueue(queueOptions) : undefined;
  const bull =
    kind === 'bullmq' ? new Queue(name, { connection: admin, prefix: 'bull' }) : undefined;
  await bull?.waitUntilReady();
  let serial = 0;
  const add = async (): Promise<void> => {
    const t = Date.now();
    const i = serial++;
    if (producer) await producer.add(`${i}@${t}`);
    else await bull?.add('noop', { t }, { removeOnComplete: true, removeOnFail: true });
  };
  try {
    const flat = await run(admin, name, config, consumers, keys, async () => {
      await Promise.all(
        Array.from({ length: producerInFlight }, async () => {
          while (serial < keys) await add();
        }),
      );
    });
    const steady = await run(admin, name, config, consumers, paced, async () => {
      const pending: Promise<void>[] = [];
      const started = Date.now();
      for (let i = 0; i < paced; i++) {
        await sleep(Math.max(0, started + (i * 1000) / pacedRate - Date.now()));
        pending.push(add());
      }
      await Promise.all(pending);
    });
    const latency = summarize(flat.latencies);
    const pacedLatency = summarize(steady.latencies);
    return {
      kind,
      consumers,
      keys,
      seconds: flat.seconds,
      keysPerSecond: keys / flat.seconds,
      latencyP50: latency.p50,
      latencyP99: latency.p99,
      commandsPerKey: flat.commands / keys,
      scriptCallsPerKey: flat.scripts / keys,
      redisCpuMicrosPerKey: (flat.redisCpuSeconds * 1e6) / keys,
      clientCpuMicrosPerKey: flat.clientCpuMicros / keys,
      pacedP50: pacedLatency.p50,
      pacedP99: pacedLatency.p99,
    };
  } finally {
    await producer?.close();
    await bull?.close();
    admin.disconnect();
  }
}

/** Starts the consumers, runs the producer, waits for every key and collects the figures. */
async function run(
  admin: Redis,
  name: string,
  config: BenchConsumerConfig,
  consumers: number,
  keys: number,
  produce: () => Promise<void>,
): Promise<Run> {
  const children: ManagedProcess[] = [];
  try {
    for (let i = 0; i < consumers; i++) {
      const child = startProcess({
        name: `${name}-${i}`,
        command: process.execPath,
        args: [consumerEntry, JSON.stringify(config)],
      });
      children.push(child);
      await child.waitForLine(/^ready$/);
    }
    await sleep(200);
    await admin.config('RESETSTAT');
    const cpuBefore = redisCpuSeconds(await admin.info('cpu'));
    const started = Date.now();
    const producerCpu = process.cpuUsage();
    await produce();
    await waitForCount(children, keys);
    const redisCpu = redisCpuSeconds(await admin.info('cpu')) - cpuBefore;
    const stats = parseCommandStats(await admin.info('commandstats'));
    const { total, scripts } = totals(stats);
    // The harness's own INFO/CONFIG calls are not the queue's work.
    const harness = (stats.info ?? 0) + (stats.config ?? 0);
    const producerCpuUsed = process.cpuUsage(producerCpu);
    const done = await Promise.all(children.map((c) => finish(c)));
    return {
      seconds: (Math.max(...done.map((d) => d.lastRunAt)) - started) / 1000,
      latencies: done.flatMap((d) => d.latencies),
      commands: total - harness,
      scripts,
      redisCpuSeconds: redisCpu,
      clientCpuMicros:
        producerCpuUsed.user +
        producerCpuUsed.system +
        done.reduce((total, d) => total + d.cpuMicros, 0),
    };
  } finally {
    await Promise.all(children.filter((c) => c.running).map((c) => c.stop('SIGKILL')));
  }
}

function redisCpuSeconds(info: string): number {
  const field = (name: string) =>
    Number(new RegExp(`^${name}:([\\d.]+)`, 'm').exec(info)?.[1] ?? 0);
  return field('used_cpu_user') + field('used_cpu_sys');
}

async function waitForCount(children: ManagedProcess[], keys: number): Promise<void> {
  const deadline = Date.now() + 300_000;
  const count = (c: ManagedProcess) =>
    Number(c.lines.findLast((l) => l.startsWith('count '))?.slice(6) ?? 0);
  while (children.reduce((n, c) => n + count(c), 0) < keys) {
    if (Date.now() > deadline) throw new Error('consumers did not finish the keys in time');
    await sleep(20);
  }
}

interface ConsumerReport {
  latencies: number[];
  lastRunAt: number;
  cpuMicros: number;
}

async function finish(child: ManagedProcess): Promise<ConsumerReport> {
  child.child.kill('SIGTERM');
  const line = await child.waitForLine(/^done /, 60_000);
  return JSON.parse(line.slice(5)) as ConsumerReport;
}

async function stressAtSize(quick: boolean): Promise<StressReport> {
  const backend = await startBackend('standalone');
  try {
    return await runStress(backend, {
      adds: quick ? 10_000 : 40_000,
      keys: 50,
      consumers: 3,
      shards: 8,
      concurrency: 5,
      producerLanes: 50,
      maxRunMs: 5,
      lockDurationMs: 2_000,
      kill: true,
    });
  } finally {
    await backend.stop();
  }
}

function report(measurements: Measurement[], stress: StressReport, keys: number): ScenarioOutput {
  const throughput: Table = {
    title: `${keys} distinct keys, producer with ${producerInFlight} adds in flight, concurrency ${concurrency} per consumer, ${shards} shards`,
    columns: [
      { key: 'system', label: 'system' },
      { key: 'consumers', label: 'consumer processes' },
      { key: 'keysPerSecond', label: 'keys/s' },
      { key: 'p50', label: 'add→start p50 ms' },
      { key: 'p99', label: 'add→start p99 ms' },
      { key: 'commands', label: 'Redis commands/key' },
      { key: 'scripts', label: 'script calls/key' },
      { key: 'cpu', label: 'Redis CPU µs/key' },
      { key: 'clientCpu', label: 'client CPU µs/key' },
      { key: 'pacedP50', label: `at ${pacedRate}/s: add→start p50 ms` },
      { key: 'pacedP99', label: `at ${pacedRate}/s: p99 ms` },
    ],
    rows: measurements.map((m) => ({
      system: m.kind === 'queue' ? 'sharded key queue' : 'raw BullMQ',
      consumers: m.consumers,
      keysPerSecond: Math.round(m.keysPerSecond),
      p50: round(m.latencyP50, 1),
      p99: round(m.latencyP99, 1),
      commands: round(m.commandsPerKey, 1),
      scripts: round(m.scriptCallsPerKey, 2),
      cpu: Math.round(m.redisCpuMicrosPerKey),
      clientCpu: Math.round(m.clientCpuMicrosPerKey),
      pacedP50: round(m.pacedP50, 1),
      pacedP99: round(m.pacedP99, 1),
    })),
  };
  const stressTable: Table = {
    title: 'Stress test across processes (SIGKILL of one consumer mid-run)',
    columns: Object.keys(stress)
      .filter((k) => k !== 'outcomes')
      .map((k) => ({ key: k, label: k })),
    rows: [
      Object.fromEntries(
        Object.entries(stress)
          .filter(([k]) => k !== 'outcomes')
          .map(([k, v]) => [k, typeof v === 'number' ? round(v, 2) : String(v)]),
      ),
    ],
  };
  const goals: Goal[] = [1, 2, 4].map((consumers) => {
    const ours = measurements.find((m) => m.kind === 'queue' && m.consumers === consumers);
    const raw = measurements.find((m) => m.kind === 'bullmq' && m.consumers === consumers);
    const ratio = (ours?.commandsPerKey ?? NaN) / (raw?.commandsPerKey ?? NaN);
    return {
      goal: `Redis cost per key, ${consumers} consumer process(es)`,
      target: '≤ 1.5× raw BullMQ',
      measured: `${round(ratio, 2)}× (${round(ours?.commandsPerKey ?? NaN, 1)} vs ${round(raw?.commandsPerKey ?? NaN, 1)} commands)`,
      met: ratio <= 1.5,
    };
  });
  return {
    settings: { keys, concurrency, shards, producerInFlight },
    tables: [throughput, stressTable],
    goals,
    raw: { measurements, stress },
  };
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const { values } = parseArgs({ options: { quick: { type: 'boolean', default: false } } });
  const out = await runQueueBench({ quick: values.quick });
  for (const table of out.tables) console.log(`\n${table.title ?? ''}\n${textTable(table)}`);
  for (const goal of out.goals ?? []) {
    console.log(
      `${goal.met ? 'met' : 'MISSED'}: ${goal.goal}: ${goal.measured} (target ${goal.target})`,
    );
  }
  console.log(
    `\nstress outcomes: ${JSON.stringify((out.raw as { stress: StressReport }).stress.outcomes)}`,
  );
}
