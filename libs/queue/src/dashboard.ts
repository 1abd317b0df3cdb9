import { createServer, type Server } from 'node:http';
import { createBullBoard } from '@bull-board/api';
import { BullMQAdapter } from '@bull-board/api/bullMQAdapter';
import { ExpressAdapter } from '@bull-board/express';
import type { Queue } from 'bullmq';

export interface DashboardOptions {
  port: number;
  host: string;
  /** The board's title (default: "Key queue"). */
  title?: string;
}

/**
 * What a record on the board is, said on every shard's card: the board shows BullMQ's jobs, and
 * this queue uses them in its own way.
 */
export const RECORDS_DESCRIPTION =
  'Each waiting or prioritized job is a key due to be reconciled (at most one per key); each ' +
  'delayed job is a key due later (a RequeueAfter or a backoff); the active job is a key being ' +
  'reconciled. A failed job is the last failed run of a key that still fails (one per key, ' +
  'with its error); it is removed when the key next succeeds. Workers are the processes serving ' +
  'the shard.';

/** "shard 03 · backupjob-3": the shard number padded, since the board sorts names as text. */
export function shardDisplayName(queueName: string, shards: number): string {
  const shard = /-(\d+)$/.exec(queueName)?.[1];
  if (shard === undefined) return queueName;
  const width = String(Math.max(0, shards - 1)).length;
  return `shard ${shard.padStart(width, '0')} · ${queueName}`;
}

/**
 * Serves Bull Board for the shard queues, read-only: Bull Board's read-only mode hides every
 * action and refuses them, and this listener also answers anything but GET and HEAD with 405,
 * so no retry, clean, remove or pause can reach Redis whatever a client sends.
 */
export async function serveQueueDashboard(
  queues: readonly Queue[],
  options: DashboardOptions,
): Promise<Server> {
  const adapter = new ExpressAdapter();
  adapter.setBasePath('/');
  createBullBoard({
    queues: queues.map(
      (queue) =>
        new BullMQAdapter(queue, {
          readOnlyMode: true,
          description: RECORDS_DESCRIPTION,
          displayName: shardDisplayName(queue.name, queues.length),
        }),
    ),
    serverAdapter: adapter,
    options: { uiConfig: { boardTitle: options.title ?? 'Key queue' } },
  });
  const app = adapter.getRouter() as (req: unknown, res: unknown) => void;
  const server = createServer((req, res) => {
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      res
        .writeHead(405, { allow: 'GET, HEAD', 'content-type': 'text/plain' })
        .end('the queue dashboard is read-only\n');
      return;
    }
    app(req, res);
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, options.host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  return server;
}
