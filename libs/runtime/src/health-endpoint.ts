import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import {
  Inject,
  Injectable,
  ServiceUnavailableException,
  type OnApplicationBootstrap,
  type OnApplicationShutdown,
} from '@nestjs/common';
import { HealthCheckService, HealthIndicatorService } from '@nestjs/terminus';
import type { CommonConfig } from '#config';
import { closeServer, listenOn, type Logger } from '#observability';
import {
  runHealthCheck,
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

/** @nestjs/terminus's two services, as the endpoint uses them. */
export interface Terminus {
  readonly service: HealthCheckService;
  readonly indicators: HealthIndicatorService;
}

/**
 * Runs every check of a probe at once through @nestjs/terminus, each as a health indicator:
 * terminus composes the report (`status`, `info`, `error`, `details`) and says whether all are up.
 * The checks run within their own timeouts first, so a hung dependency never holds a probe.
 */
export async function healthReport(
  terminus: Terminus,
  checks: readonly HealthCheck[],
): Promise<HealthReport> {
  const indicators = checks.map((check) => async () => {
    const outcome = await runHealthCheck(check);
    const session = terminus.indicators.check(check.name);
    return outcome.up
      ? session.up({ ...outcome.details, responseTime: outcome.responseTime })
      : session.down({ message: outcome.message, responseTime: outcome.responseTime });
  });
  try {
    return (await terminus.service.check(indicators)) as unknown as HealthReport;
  } catch (err) {
    // terminus answers "not all up" by throwing the 503 it would send, its body the report.
    if (err instanceof ServiceUnavailableException) return err.getResponse() as HealthReport;
    throw err;
  }
}

/**
 * /healthz and /readyz on HEALTH_PORT, from the checks registered at the time of the request: 200
 * when every check is up, 503 naming the failing ones under `error`, each with its reason as
 * `message`: @nestjs/terminus's report, served with node:http rather than through an HTTP
 * framework, which a process loading for two paths would pay for at every start. It opens with the
 * app and closes last, after the shutdown chain, so that readiness says "shutting down" while the
 * process drains.
 */
@Injectable()
export class HealthEndpoint implements OnApplicationBootstrap, OnApplicationShutdown {
  private server: Server | undefined;
  private lastReadiness: string | undefined;

  constructor(
    @Inject(CONFIG) private readonly config: CommonConfig,
    @Inject(HEALTH) private readonly registry: HealthRegistry,
    @Inject(LOGGER) private readonly logger: Logger,
    private readonly service: HealthCheckService,
    private readonly indicators: HealthIndicatorService,
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
    const terminus = { service: this.service, indicators: this.indicators };
    const report = await healthReport(terminus, this.registry.checks(probe));
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
