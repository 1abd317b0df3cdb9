/**
 * One consumer process of the queue benchmark: either the sharded key queue or a raw BullMQ
 * Worker with a no-op processor. Both learn the add time from the item itself (the key carries
 * it, or the job data), so add→start latency needs no clock but the machine's.
 * Prints `ready`, then `count <n>` as runs complete, and on SIGTERM `done <json>` (with the CPU
 * time the process used since `ready`).
 */
import { Worker } from 'bullmq';
import { QueueConsumer, type QueueOptions } from '#queue';

export interface BenchConsumerConfig {
  kind: 'queue' | 'bullmq';
  queue: QueueOptions;
  /** BullMQ queue name and connection, for kind bullmq. */
  bullmq: { name: string; prefix: string; url: string };
  concurrency: number;
}

const config = JSON.parse(process.argv[2] ?? '{}') as BenchConsumerConfig;
const latencies: number[] = [];
let lastRunAt = 0;

function record(addedAt: number): void {
  const now = Date.now();
  latencies.push(now - addedAt);
  lastRunAt = now;
}

let stop: () => Promise<void>;
if (config.kind === 'queue') {
  const consumer = new QueueConsumer(config.queue);
  consumer.start({
    concurrency: config.concurrency,
    // Keys are `<index>@<add time ms>`.
    handler: (key) => record(Number(key.slice(key.indexOf('@') + 1))),
  });
  stop = () => consumer.shutdown();
} else {
  const url = new URL(config.bullmq.url);
  const worker = new Worker(
    config.bullmq.name,
    async (job) => record((job.data as { t: number }).t),
    {
      connection: { host: url.hostname, port: Number(url.port) },
      prefix: config.bullmq.prefix,
      concurrency: config.concurrency,
    },
  );
  await worker.waitUntilReady();
  stop = () => worker.close();
}

let reported = 0;
const progress = setInterval(() => {
  if (latencies.length === reported) return;
  reported = latencies.length;
  process.stdout.write(`count ${reported}\n`);
}, 50);

process.once('SIGTERM', () => {
  clearInterval(progress);
  void stop().then(() => {
    const { user, system } = process.cpuUsage(cpuAtReady);
    const cpuMicros = user + system;
    process.stdout.write(`done ${JSON.stringify({ latencies, lastRunAt, cpuMicros })}\n`);
    process.exit(0);
  });
});
const cpuAtReady = process.cpuUsage();
process.stdout.write('ready\n');
