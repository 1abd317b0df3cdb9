import { Inject, Injectable, type OnApplicationBootstrap } from '@nestjs/common';
import type { Redis } from 'ioredis';
import { queueOptions, type WatcherConfig } from '../../../libs/config/src/index.js';
import { WatcherManager } from '../../../libs/kube/src/index.js';
import type {
  HealthRegistry,
  Logger,
  OperatorMetrics,
  ShutdownCoordinator,
} from '../../../libs/observability/src/index.js';
import {
  CONFIG,
  HEALTH,
  KUBE,
  LOGGER,
  REDIS,
  METRICS,
  SHUTDOWN,
  type KubeConnection,
} from '../../../libs/observability/src/nest/index.js';
import { exitAfterFlush } from '../../../libs/observability/src/index.js';
import { WorkQueue } from '../../../libs/queue/src/index.js';
import { RedisSnapshotStore } from '../../../libs/snapshot/src/index.js';

/**
 * Wires leader election, the informers, the snapshot store and the queue: while this process
 * holds the Lease, every change rewrites its BackupJob's snapshot, and every relevant change then
 * becomes its BackupJob's key in the queue.
 */
@Injectable()
export class WatchLoop implements OnApplicationBootstrap {
  private readonly manager: WatcherManager;

  constructor(
    @Inject(CONFIG) private readonly config: WatcherConfig,
    @Inject(LOGGER) private readonly logger: Logger,
    @Inject(METRICS) metrics: OperatorMetrics,
    @Inject(HEALTH) health: HealthRegistry,
    @Inject(KUBE) kube: KubeConnection,
    @Inject(REDIS) redis: Redis,
    @Inject(SHUTDOWN) shutdown: ShutdownCoordinator,
  ) {
    const queue = new WorkQueue(queueOptions(config, metrics.registry));
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
    shutdown.onShutdown('close', 'work-queue', () => queue.close());
  }

  onApplicationBootstrap(): void {
    void this.manager.run();
    this.logger.info('campaigning for leadership', {
      lease: `${this.config.leaderElection.namespace}/${this.config.leaderElection.id}`,
    });
  }
}
