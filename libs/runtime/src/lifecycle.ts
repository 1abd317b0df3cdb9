import {
  Inject,
  Injectable,
  type BeforeApplicationShutdown,
  type OnApplicationBootstrap,
  type OnApplicationShutdown,
} from '@nestjs/common';
import type { Server } from 'node:http';
import type { CommonConfig } from '#config';
import { MetricsAuthorizer, closeServer, serveMetrics, type OperatorMetrics } from '#observability';
import type { HealthRegistry } from './health.js';
import { readinessCheckMetrics } from './health-metrics.js';
import type { ShutdownCoordinator } from './shutdown.js';
import type { KubeConnection } from './kube.provider.js';
import { CONFIG, HEALTH, KUBE, METRICS, SHUTDOWN } from './tokens.js';

/** Opens the /metrics listener with the app and closes it after the shutdown chain has run. */
@Injectable()
export class MetricsEndpoint implements OnApplicationBootstrap, OnApplicationShutdown {
  private server: Server | undefined;

  constructor(
    @Inject(CONFIG) private readonly config: CommonConfig,
    @Inject(METRICS) private readonly metrics: OperatorMetrics,
    @Inject(KUBE) private readonly kube: KubeConnection,
    @Inject(HEALTH) health: HealthRegistry,
  ) {
    metrics.textSources.add(readinessCheckMetrics(health));
  }

  async onApplicationBootstrap(): Promise<void> {
    const { port, bindAddress, secure, certDir } = this.config.metrics;
    const rest = this.kube.rest;
    const auth = secure
      ? new MetricsAuthorizer(<T>(path: string, body: object) =>
          rest.request<T>({ method: 'POST', path, body }),
        )
      : undefined;
    this.server = await serveMetrics(
      this.metrics.registry,
      port,
      bindAddress,
      auth && certDir ? { certDir, decide: (header) => auth.decide(header) } : undefined,
      this.metrics.textSources,
    );
  }

  async onApplicationShutdown(): Promise<void> {
    if (this.server) await closeServer(this.server);
  }
}

/**
 * Runs the ShutdownCoordinator's phases when Nest shuts down (SIGTERM, SIGINT or app.close()),
 * before Nest closes the probe server. Components register with the coordinator instead of
 * using onModuleDestroy, which Nest would run before this chain and in no defined order.
 */
@Injectable()
export class ShutdownChain implements BeforeApplicationShutdown {
  constructor(@Inject(SHUTDOWN) private readonly coordinator: ShutdownCoordinator) {}

  async beforeApplicationShutdown(signal?: string): Promise<void> {
    const { unfinished } = await this.coordinator.shutdown(signal ?? 'application closed');
    // Nest turns a failed shutdown into exit code 1, which is the truth here.
    if (unfinished.length > 0) throw new Error(`shutdown incomplete: ${unfinished.join(', ')}`);
  }
}
