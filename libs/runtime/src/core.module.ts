import { Module, type DynamicModule } from '@nestjs/common';
import { TerminusModule } from '@nestjs/terminus';
import type { CommonConfig } from '#config';
import { HealthRegistry } from './health.js';
import type { Logger, OperatorMetrics } from '#observability';
import { ShutdownCoordinator } from './shutdown.js';
import { HealthEndpoint } from './health-endpoint.js';
import { MetricsEndpoint, ShutdownChain } from './lifecycle.js';
import { kubeProvider } from './kube.provider.js';
import { redisProvider } from './redis.provider.js';
import { CONFIG, HEALTH, KUBE, LOGGER, METRICS, REDIS, SHUTDOWN } from './tokens.js';

export interface CoreContext<C extends CommonConfig = CommonConfig> {
  /** `watcher` or `worker`. */
  readonly app: string;
  readonly config: C;
  readonly logger: Logger;
  readonly metrics: OperatorMetrics;
}

/**
 * What both operator processes share, made global so feature modules inject it by token:
 * CONFIG, LOGGER, METRICS, HEALTH, SHUTDOWN, REDIS, KUBE; plus /healthz, /readyz and /metrics.
 */
@Module({})
export class OperatorCoreModule {
  static forRoot(context: CoreContext): DynamicModule {
    return {
      module: OperatorCoreModule,
      global: true,
      // Its own logger off: a failing check is what readiness logs once, as it changes.
      imports: [TerminusModule.forRoot({ logger: false })],
      providers: [
        { provide: CONFIG, useValue: context.config },
        { provide: LOGGER, useValue: context.logger },
        { provide: METRICS, useValue: context.metrics },
        { provide: HEALTH, useValue: new HealthRegistry() },
        {
          provide: SHUTDOWN,
          inject: [HEALTH],
          useFactory: (health: HealthRegistry) => {
            const coordinator = new ShutdownCoordinator(
              context.config.shutdownGracePeriodMs,
              context.logger.child({ component: 'shutdown' }),
            );
            coordinator.registerReadiness(health);
            return coordinator;
          },
        },
        redisProvider,
        kubeProvider(context.app),
        HealthEndpoint,
        MetricsEndpoint,
        ShutdownChain,
      ],
      exports: [CONFIG, LOGGER, METRICS, HEALTH, SHUTDOWN, REDIS, KUBE],
    };
  }
}
