import { createServer, type Server } from 'node:http';
import type { Registry } from 'prom-client';
import type { MetricsTextSource } from './metrics.js';

/**
 * /metrics on its own plain node:http listener rather than a second Nest application: a scrape
 * then needs no DI container, router or middleware, the port is independent of the probes' (as
 * controller-runtime's :8080 and :8081), and it keeps answering while Nest tears the probe
 * server down during shutdown.
 */
export async function serveMetrics(
  registry: Registry,
  port: number,
  host: string,
  textSources: ReadonlySet<MetricsTextSource> = new Set(),
): Promise<Server> {
  const server = createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0];
    if (path !== '/metrics' || (req.method !== 'GET' && req.method !== 'HEAD')) {
      res.writeHead(404, { 'content-type': 'text/plain' }).end('not found\n');
      return;
    }
    exposition(registry, textSources).then(
      (body) => res.writeHead(200, { 'content-type': registry.contentType }).end(body),
      (err: unknown) =>
        res.writeHead(500, { 'content-type': 'text/plain' }).end(`${String(err)}\n`),
    );
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  return server;
}

/**
 * The registry's metrics, then each text source's. A source that fails is left out, so the
 * operator's own metrics are still scraped while, say, Redis is unreachable.
 */
async function exposition(
  registry: Registry,
  textSources: ReadonlySet<MetricsTextSource>,
): Promise<string> {
  const [own, ...extra] = await Promise.all([
    registry.metrics(),
    ...[...textSources].map((source) => source().catch(() => '')),
  ]);
  return [own, ...extra.filter((text) => text !== '')]
    .map((text) => (text.endsWith('\n') ? text : `${text}\n`))
    .join('');
}

export async function closeServer(server: Server): Promise<void> {
  const closed = new Promise<void>((resolve) => server.close(() => resolve()));
  server.closeAllConnections();
  await closed;
}
