import type { Server } from 'node:http';
import { Inject, Injectable, type OnApplicationBootstrap } from '@nestjs/common';
import type { WatcherConfig } from '#config';
import { WatcherManager } from '#kube';
import { closeServer, type Logger, type OperatorMetrics } from '#observability';
import {
  CONFIG,
  HEALTH,
  KUBE,
  LOGGER,
  REDIS,
  METRICS,
  SHUTDOWN,
  exitAfterFlush,
  queueOptions,
  type HealthRegistry,
  type KubeConnection,
  type ShutdownCoordinator,
} from '#runtime';
import { WorkQueue, type RedisClient } from '#queue';
import { serveQueueDashboard } from '#queue/dashboard';
import { RedisSnapshotStore } from '#snapshot';

/**
 * Wires leader election, the informers, the snapshot store and the queue: while this process
 * holds the Lease, every change rewrites its BackupJob's snapshot, and every relevant change then
 * becomes its BackupJob's key in the queue.
 */
@Injectable()
export class WatchLoop implements OnApplicationBootstrap {
  private readonly manager: WatcherManager;
  private readonly queue: WorkQueue;
  private dashboard: Server | undefined;

  constructor(
    @Inject(CONFIG) private readonly config: WatcherConfig,
    @Inject(LOGGER) private readonly logger: Logger,
    @Inject(METRICS) metrics: OperatorMetrics,
    @Inject(HEALTH) health: HealthRegistry,
    @Inject(KUBE) kube: KubeConnection,
    @Inject(REDIS) redis: RedisClient,
    @Inject(SHUTDOWN) shutdown: ShutdownCoordinator,
  ) {
    const queue = new WorkQueue(queueOptions(config, metrics.registry));
    // BullMQ's view of the shards is the same from every process: the watchers serve it, so the
    // workers' scrapes cost Redis nothing extra and Prometheus gets no copy per worker.
    metrics.textSources.add(() => queue.exportPrometheusMetrics());
    const snapshots = new RedisSnapshotStore(redis, config.queue.name);
    this.manager = new WatcherManager({
      rest: kube.rest,
      leaderElection: {
        namespace: config.leaderElection.namespace,
        name: config.leaderElection.id,
        identity: config.leaderElection.identity,
        leaseDurationMs: config.leaderElection.leaseDurationMs,
        renewDeadlineMs: config.leaderElection.renewDeadlineMs,
        retryPeriodMs: config.leaderElection.retryPeriodMs,
      },
      controller: {
        queue,
        snapshots,
        namespaces: config.watchNamespaces,
        resyncPeriodMs: config.resyncPeriodMs,
      },
      metrics: metrics.leaderElection,
      log: logger.child({ component: 'watcher' }),
      // controller-runtime exits when leadership is lost, so nothing of the old term lingers.
      onLost: () => {
        logger.error('leadership lost; exiting to restart clean');
        void exitAfterFlush(1);
      },
    });
    queue.on('reset', () => {
      const keys = this.manager.reAddAll();
      logger.warn('the queue lost its data in Redis; re-added every key', { keys });
    });

    health.register({
      name: 'watcher',
      probes: ['readiness'],
      check: () => {
        const status = this.manager.status();
        if (!status.ready) {
          throw new Error(
            `leader not ready: informers ${status.synced ? 'synced' : 'not synced'}, watches ${status.healthy ? 'alive' : 'not alive'}`,
          );
        }
        return { role: status.leader ? 'leader' : 'standby' };
      },
    });
    shutdown.onShutdown('release', 'leader-election', () => this.manager.stop());
    shutdown.onShutdown('close', 'queue-dashboard', async () => {
      if (this.dashboard) await closeServer(this.dashboard);
    });
    shutdown.onShutdown('close', 'work-queue', () => queue.close());
    this.queue = queue;
  }

  async onApplicationBootstrap(): Promise<void> {
    const dashboard = this.config.queueDashboard;
    if (dashboard) {
      this.dashboard = await serveQueueDashboard(this.queue.bullQueues, {
        port: dashboard.port,
        host: dashboard.bindAddress,
      });
      this.logger.info('serving the read-only queue dashboard', { port: dashboard.port });
    }
    void this.manager.run();
    this.logger.info('campaigning for leadership', {
      lease: `${this.config.leaderElection.namespace}/${this.config.leaderElection.id}`,
    });
  }
}
