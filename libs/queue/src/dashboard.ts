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
          description: 'one job per pending key; failed jobs keep the error of the last run',
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
