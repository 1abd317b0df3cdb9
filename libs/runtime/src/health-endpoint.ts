import { Controller, Get, Inject } from '@nestjs/common';
import { HealthCheck, HealthCheckService, HealthIndicatorService } from '@nestjs/terminus';
import { DEFAULT_CHECK_TIMEOUT_MS, type HealthRegistry, type Probe } from './health.js';
import type { Logger } from '#observability';
import { HEALTH, LOGGER } from './tokens.js';

/**
 * /healthz and /readyz, built by terminus from the checks registered at request time. A failing
 * check answers 503 with the failing check named under `error` and its reason as `message`.
 */
@Controller()
export class HealthController {
  private lastReadiness: string | undefined;

  constructor(
    @Inject(HealthCheckService) private readonly health: HealthCheckService,
    @Inject(HealthIndicatorService) private readonly indicators: HealthIndicatorService,
    @Inject(HEALTH) private readonly registry: HealthRegistry,
    @Inject(LOGGER) private readonly logger: Logger,
  ) {}

  @Get('healthz')
  @HealthCheck()
  liveness() {
    return this.run('liveness');
  }

  @Get('readyz')
  @HealthCheck()
  async readiness() {
    try {
      const result = await this.run('readiness');
      this.noteReadiness('ready', {});
      return result;
    } catch (err) {
      const details = (err as { response?: { error?: Record<string, unknown> } }).response?.error;
      this.noteReadiness(`not ready: ${Object.keys(details ?? {}).join(',')}`, {
        failing: details,
      });
      throw err;
    }
  }

  private run(probe: Probe) {
    return this.health.check(
      this.registry.checks(probe).map(
        (c) => () =>
          this.indicators
            .check(c.name)
            .attempt(({ signal }) => c.check(signal))
            .withTimeout(c.timeoutMs ?? DEFAULT_CHECK_TIMEOUT_MS),
      ),
    );
  }

  /** Logs readiness changes only, not every probe. */
  private noteReadiness(state: string, fields: Record<string, unknown>): void {
    if (state === this.lastReadiness) return;
    this.lastReadiness = state;
    const level = state === 'ready' ? 'info' : 'warn';
    this.logger.write(level, `readiness: ${state}`, fields);
  }
}
