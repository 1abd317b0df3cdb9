import { readFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { createServer as createTlsServer } from 'node:https';
import { join } from 'node:path';
import type { Registry } from 'prom-client';
import type { ScrapeDecision } from './metrics-auth.js';

export interface SecureMetricsOptions {
  /** Directory with tls.crt and tls.key. */
  readonly certDir: string;
  /** Decides each scrape from its Authorization header. */
  readonly decide: (authorization: string | undefined) => Promise<ScrapeDecision>;
}

const REFUSED: Record<401 | 403, string> = {
  401: 'Unauthorized: a bearer token the API server accepts is required\n',
  403: "Forbidden: the token's user may not get /metrics\n",
};

function text(res: ServerResponse, code: number, body: string): void {
  res.writeHead(code, { 'content-type': 'text/plain' }).end(body);
}
import type { MetricsTextSource } from './metrics.js';

/**
 * /metrics on its own plain node:http listener rather than a second Nest application: a scrape
 * then needs no DI container, router or middleware, the port is independent of the probes' (as
 * controller-runtime's :8080 and :8081), and it keeps answering while Nest tears the probe
 * server down during shutdown. With `secure`, it is HTTPS and every scrape is authorized first.
 */
export async function serveMetrics(
  registry: Registry,
  port: number,
  host: string,
  secure?: SecureMetricsOptions,
  textSources: ReadonlySet<MetricsTextSource> = new Set(),
): Promise<Server> {
  const scrape = async (req: IncomingMessage, res: ServerResponse) => {
    const path = (req.url ?? '/').split('?')[0];
    if (path !== '/metrics' || (req.method !== 'GET' && req.method !== 'HEAD')) {
      return text(res, 404, 'not found\n');
    }
    try {
      const decision = secure ? await secure.decide(req.headers.authorization) : 200;
      if (decision !== 200) return text(res, decision, REFUSED[decision]);
      const parts = await exposition(registry, textSources);
      res.writeHead(200, { 'content-type': registry.contentType });
      await writeChunks(res, parts);
    } catch (err) {
      // Once the first chunk is out, the status is sent: cut the response short instead.
      if (res.headersSent) res.destroy(err as Error);
      else text(res, 500, `${String(err)}\n`);
    }
  };
  const handler = (req: IncomingMessage, res: ServerResponse) => void scrape(req, res);
  const server = secure
    ? createTlsServer(
        {
          cert: readFileSync(join(secure.certDir, 'tls.crt')),
          key: readFileSync(join(secure.certDir, 'tls.key')),
        },
        handler,
      )
    : createServer(handler);
  await listenOn(server, port, host);
  return server;
}

/** Starts listening; rejects when the port cannot be had (taken, not allowed). */
export function listenOn(server: Server, port: number, host: string): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
}

/**
 * The registry's metrics, then each text source's. A source that fails is left out, so the
 * operator's own metrics are still scraped while, say, Redis is unreachable.
 */
async function exposition(
  registry: Registry,
  textSources: ReadonlySet<MetricsTextSource>,
): Promise<Iterable<string>[]> {
  const [own, ...extra] = await Promise.all([
    registry.metrics(),
    ...[...textSources].map((source) => source().catch(() => '')),
  ]);
  return [own, ...extra].map((text) =>
    typeof text !== 'string' ? text : text === '' || text.endsWith('\n') ? [text] : [`${text}\n`],
  );
}

/**
 * Writes chunk by chunk, waiting for the socket to drain when its buffer is full, so a large
 * exposition is never held whole, as text or as buffered output. Stops if the scraper went away.
 */
async function writeChunks(res: ServerResponse, parts: readonly Iterable<string>[]): Promise<void> {
  for (const part of parts) {
    for (const chunk of part) {
      if (res.destroyed) return;
      if (chunk !== '' && !res.write(chunk)) await drained(res);
    }
  }
  res.end();
}

function drained(res: ServerResponse): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      res.off('drain', done).off('close', done);
      resolve();
    };
    res.on('drain', done).on('close', done);
  });
}

export async function closeServer(server: Server): Promise<void> {
  const closed = new Promise<void>((resolve) => server.close(() => resolve()));
  server.closeAllConnections();
  await closed;
}
