import { setTimeout as sleep } from 'node:timers/promises';
import { QueueConsumer, WorkQueue, type Handler, type QueueOptions } from '../src/index.js';
import type { Backend } from './backends.js';

let queues = 0;

/** Options for a fresh queue (its own name) on the backend. */
export function queueOptions(
  backend: Backend,
  overrides: Partial<QueueOptions> = {},
): QueueOptions {
  return {
    name: `test-${process.pid}-${queues++}`,
    connection: backend.connection,
    shards: 4,
    lockDurationMs: 2_000,
    resetCheckIntervalMs: 200,
    ...overrides,
  };
}

export interface RunLog {
  key: string;
  failures: number;
  shard: number;
  start: number;
  end?: number;
}

/** A consumer whose handler is given per test and whose runs are logged in order. */
export function startConsumer(
  options: QueueOptions,
  handler: Handler = () => undefined,
  start: { concurrency?: number; shards?: number[] } = {},
): { consumer: QueueConsumer; runs: RunLog[] } {
  const runs: RunLog[] = [];
  const consumer = new QueueConsumer(options);
  consumer.start({
    concurrency: start.concurrency ?? 4,
    shards: start.shards,
    handler: async (key, ctx) => {
      const run: RunLog = { key, failures: ctx.failures, shard: ctx.shard, start: Date.now() };
      runs.push(run);
      try {
        return await handler(key, ctx);
      } finally {
        run.end = Date.now();
      }
    },
  });
  return { consumer, runs };
}

/** Polls until the condition holds; the deadline is generous because CI machines are shared. */
export async function waitFor(
  condition: () => boolean | Promise<boolean>,
  what: string,
  timeoutMs = 20_000,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(10);
  }
}

/** Waits until nothing is waiting, delayed or running in any shard. */
export async function waitForIdle(queue: WorkQueue): Promise<void> {
  await waitFor(
    async () => (await queue.depth()).every((d) => d.ready + d.delayed + d.running === 0),
    'the queue to become idle',
  );
}

/** A promise with its resolve function, to hold a handler until the test lets it go. */
export function gate(): { promise: Promise<void>; open: () => void } {
  let open = () => undefined as void;
  const promise = new Promise<void>((resolve) => (open = resolve));
  return { promise, open };
}
