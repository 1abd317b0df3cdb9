import type { Server } from 'node:http';
import { Inject, Injectable, type OnApplicationBootstrap } from '@nestjs/common';
import type { BackupJob } from '#api';
import type { WatcherConfig } from '#config';
import { backupJobMetrics } from '#controller';
import { closeServer, type Logger, type OperatorMetrics } from '#observability';
import { Manager } from '#watch';
import {
  CONFIG,
  HEALTH,
  KUBE,
  LOGGER,
  METRICS,
  SHUTDOWN,
  exitAfterFlush,
  queueOptions,
  type HealthRegistry,
  type KubeConnection,
  type ShutdownCoordinator,
} from '#runtime';
import { WorkQueue } from '#queue';
import { reconcilerConfig } from '#reconciler';
import { RedisConvergedMarks, RedisSnapshotStore } from '#snapshot';

/**
 * Wires leader election, the informers, the snapshot store and the queue: while this process
 * holds the Lease, every change rewrites its BackupJob's snapshot, and every relevant change then
 * becomes its BackupJob's key in the queue.
 */
@Injectable()
export class WatchLoop implements OnApplicationBootstrap {
  private readonly manager: Manager;
  private readonly queue: WorkQueue;
  private dashboard: Server | undefined;

  constructor(
    @Inject(CONFIG) private readonly config: WatcherConfig,
    @Inject(LOGGER) private readonly logger: Logger,
    @Inject(METRICS) metrics: OperatorMetrics,
    @Inject(HEALTH) health: HealthRegistry,
    @Inject(KUBE) kube: KubeConnection,
    @Inject(SHUTDOWN) shutdown: ShutdownCoordinator,
  ) {
    const options = queueOptions(config, metrics.registry);
    const queue = new WorkQueue(options);
    // BullMQ's view of the shards is the same from every process: the watchers serve it, so the
    // workers' scrapes cost Redis nothing extra and Prometheus gets no copy per worker.
    metrics.textSources.add(() => queue.exportPrometheusMetrics());
    // On the queue's connection: the queue confirms the snapshots on the replicas with its keys.
    const snapshots = new RedisSnapshotStore(queue.client, options);
    this.manager = new Manager({
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
        converged: new RedisConvergedMarks(queue.client, options),
        onConvergedSkipped: (keys) => metrics.resync.skipped.inc(keys),
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
    metrics.textSources.add(
      backupJobMetrics({ backupJobs: () => this.cachedBackupJobs(), config: reconcilerConfig() }),
    );
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

  /** The leader's synced cache of BackupJobs; none on a standby or before the first list. */
  private cachedBackupJobs(): Iterable<BackupJob> | undefined {
    const controller = this.manager.controller;
    if (!this.manager.status().leader || !controller?.synced) return undefined;
    return controller.backupJobs.list() as Iterable<unknown> as Iterable<BackupJob>;
  }

  async onApplicationBootstrap(): Promise<void> {
    const dashboard = this.config.queueDashboard;
    if (dashboard) {
      // Bull Board and Express load only when the dashboard is switched on (it is off by default).
      const { serveQueueDashboard } = await import('#queue/dashboard');
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
