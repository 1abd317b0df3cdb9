/**
 * A consumer in its own process, for the tests that need real processes (SIGKILL, stalls, the
 * stress test). Configured by one JSON argument; reports each run on stdout, one line per event:
 *   S <key> <runId> <version> <ms>   run started (after its marker was set and the version read)
 *   E <key> <runId> <outcome> <ms>   run ended (outcome: ok, after, error, terminal)
 *   V <key> <runId>                  the key's marker was already set: two runs at once
 *   L <key>                          lease lost
 * Keys starting with `hang/` run until aborted; `stall/` block the event loop until the file
 * `stallUntil` exists, so that a test ends the stall once it has seen what it waits for, however
 * long that took; `slow/` take `longRunMs`.
 */
import { existsSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { Cluster, Redis } from 'ioredis';
import {
  QueueConsumer,
  TerminalError,
  type QueueOptions,
  type HandlerResult,
} from '../src/index.js';

export interface ConsumerProcessConfig {
  queue: QueueOptions;
  concurrency: number;
  shards?: number[];
  maxRunMs: number;
  errorRate: number;
  requeueRate: number;
  terminalRate: number;
  requeueAfterMs: [number, number];
  /** Share of runs that take `longRunMs`, so a test can kill a consumer while one is running. */
  longRunRate: number;
  longRunMs: number;
  /** The file whose creation ends a `stall/` key's stall. */
  stallUntil?: string;
}

const config = JSON.parse(process.argv[2] ?? '{}') as ConsumerProcessConfig;
const { url, redis, cluster } = config.queue.connection;
const data = cluster
  ? new Cluster(cluster.nodes)
  : url !== undefined
    ? new Redis(url)
    : new Redis({ ...redis });
const markerMs = Math.floor((config.queue.lockDurationMs ?? 30_000) / 2);
let runs = 0;

function say(line: string): void {
  process.stdout.write(`${line}\n`);
}

/** Blocks the thread, without spinning, until `file` exists: no timer, renewal or reply runs. */
function stall(file: string | undefined): void {
  if (file === undefined) throw new Error('a stall/ key needs stallUntil');
  const cell = new Int32Array(new SharedArrayBuffer(4));
  while (!existsSync(file)) Atomics.wait(cell, 0, 0, 5);
}

async function handle(key: string, signal: AbortSignal): Promise<HandlerResult> {
  const runId = `${process.pid}-${runs++}`;
  const marked = await data.set(`marker:${key}`, runId, 'PX', markerMs, 'NX');
  if (marked === null) say(`V ${key} ${runId}`);
  const version = (await data.get(`ver:${key}`)) ?? '0';
  say(`S ${key} ${runId} ${version} ${Date.now()}`);
  if (key.startsWith('hang/'))
    await new Promise((_, reject) => signal.addEventListener('abort', reject));
  if (key.startsWith('stall/')) stall(config.stallUntil);
  const long = key.startsWith('slow/') || Math.random() < config.longRunRate;
  await sleep(long ? config.longRunMs : Math.random() * config.maxRunMs);
  const dice = Math.random();
  const outcome =
    dice < config.errorRate
      ? 'error'
      : dice < config.errorRate + config.requeueRate
        ? 'after'
        : dice < config.errorRate + config.requeueRate + config.terminalRate
          ? 'terminal'
          : 'ok';
  if (marked !== null) await data.del(`marker:${key}`);
  say(`E ${key} ${runId} ${outcome} ${Date.now()}`);
  if (outcome === 'error') throw new Error('injected failure');
  if (outcome === 'terminal') throw new TerminalError('injected terminal failure');
  if (outcome === 'after') {
    const [min, max] = config.requeueAfterMs;
    return { requeueAfter: min + Math.random() * (max - min) };
  }
  return undefined;
}

const consumer = new QueueConsumer(config.queue);
consumer.on('leaseLost', (key) => say(`L ${key}`));
consumer.on('reset', (shards) => say(`R ${shards.join(',')}`));
consumer.start({
  concurrency: config.concurrency,
  shards: config.shards,
  handler: (key, ctx) => handle(key, ctx.signal),
});
process.once('SIGTERM', () => {
  void consumer.shutdown({ drainTimeoutMs: 5_000 }).then(() => {
    data.disconnect();
    say('stopped');
    process.exit(0);
  });
});
say('ready');
