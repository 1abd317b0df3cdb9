import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import {
  Inject,
  Injectable,
  type OnApplicationBootstrap,
  type OnApplicationShutdown,
} from '@nestjs/common';
import type { CommonConfig } from '#config';
import { closeServer, listenOn, type Logger } from '#observability';
import {
  DEFAULT_CHECK_TIMEOUT_MS,
  type CheckDetails,
  type HealthCheck,
  type HealthRegistry,
  type Probe,
} from './health.js';
import { CONFIG, HEALTH, LOGGER } from './tokens.js';

/** What one check reported: `up` or `down` (with the reason), its time and its details. */
export type CheckResult = CheckDetails & {
  readonly status: 'up' | 'down';
  readonly responseTime: number;
  readonly message?: string;
};

/** The body of /healthz and /readyz: every check under `details`, split into `info` and `error`. */
export interface HealthReport {
  readonly status: 'ok' | 'error';
  readonly info: Record<string, CheckResult>;
  readonly error: Record<string, CheckResult>;
  readonly details: Record<string, CheckResult>;
}

const PATHS: Readonly<Record<string, Probe>> = { '/healthz': 'liveness', '/readyz': 'readiness' };

/** Runs one check within its timeout; a throw or a timeout is `down` with the reason. */
async function runCheck(check: HealthCheck): Promise<CheckResult> {
  const timeoutMs = check.timeoutMs ?? DEFAULT_CHECK_TIMEOUT_MS;
  const abort = new AbortController();
  let timer: NodeJS.Timeout | undefined;
  const timedOut = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      // Down first: a check that answers its abort must not count as up.
      reject(new Error(`timeout of ${timeoutMs}ms exceeded`));
      abort.abort();
    }, timeoutMs);
  });
  const started = Date.now();
  try {
    const details = await Promise.race([Promise.resolve(check.check(abort.signal)), timedOut]);
    return { ...details, responseTime: Date.now() - started, status: 'up' };
  } catch (err) {
    const message = err instanceof Error ? err.message : String(err);
    return { message, responseTime: Date.now() - started, status: 'down' };
  } finally {
    clearTimeout(timer);
  }
}

/** Runs every check of a probe at once: ok when all are up. */
export async function healthReport(checks: readonly HealthCheck[]): Promise<HealthReport> {
  const results = await Promise.all(checks.map(runCheck));
  const report: HealthReport = { status: 'ok', info: {}, error: {}, details: {} };
  checks.forEach((c, i) => {
    const result = results[i]!;
    report.details[c.name] = result;
    (result.status === 'up' ? report.info : report.error)[c.name] = result;
  });
  return { ...report, status: Object.keys(report.error).length === 0 ? 'ok' : 'error' };
}

/**
 * /healthz and /readyz on HEALTH_PORT, from the checks registered at the time of the request: 200
 * when every check is up, 503 naming the failing ones under `error`, each with its reason as
 * `message` (the body @nestjs/terminus gave, which an HTTP framework per process is too much to
 * load for). It opens with the app and closes last, after the shutdown chain, so that readiness
 * says "shutting down" while the process drains.
 */
@Injectable()
export class HealthEndpoint implements OnApplicationBootstrap, OnApplicationShutdown {
  private server: Server | undefined;
  private lastReadiness: string | undefined;

  constructor(
    @Inject(CONFIG) private readonly config: CommonConfig,
    @Inject(HEALTH) private readonly registry: HealthRegistry,
    @Inject(LOGGER) private readonly logger: Logger,
  ) {}

  async onApplicationBootstrap(): Promise<void> {
    const server = createServer((req, res) => void this.answer(req, res));
    await listenOn(server, this.config.health.port, this.config.health.bindAddress);
    this.server = server;
  }

  async onApplicationShutdown(): Promise<void> {
    if (this.server) await closeServer(this.server);
  }

  private async answer(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const probe = PATHS[(req.url ?? '/').split('?')[0]!];
    if (!probe || (req.method !== 'GET' && req.method !== 'HEAD')) {
      res.writeHead(404, { 'content-type': 'text/plain' }).end('not found\n');
      return;
    }
    const report = await healthReport(this.registry.checks(probe));
    if (probe === 'readiness') this.noteReadiness(report);
    res
      .writeHead(report.status === 'ok' ? 200 : 503, { 'content-type': 'application/json' })
      .end(JSON.stringify(report));
  }

  /** Logs readiness changes only, not every probe. */
  private noteReadiness(report: HealthReport): void {
    const state =
      report.status === 'ok' ? 'ready' : `not ready: ${Object.keys(report.error).join(',')}`;
    if (state === this.lastReadiness) return;
    this.lastReadiness = state;
    if (report.status === 'ok') this.logger.write('info', `readiness: ${state}`, {});
    else this.logger.write('warn', `readiness: ${state}`, { failing: report.error });
  }
}
