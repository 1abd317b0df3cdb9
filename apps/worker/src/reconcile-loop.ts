import { Inject, Injectable, type OnApplicationBootstrap } from '@nestjs/common';
import type { WorkerConfig } from '#config';
import {
  createReconcileKey,
  dropInvalidKeys,
  instrumentReconcileKey,
  type ReconcileKey,
} from '#controller';
import type { Logger, OperatorMetrics } from '#observability';
import {
  CONFIG,
  KUBE,
  LOGGER,
  METRICS,
  REDIS,
  SHUTDOWN,
  queueOptions,
  type KubeConnection,
  type ShutdownCoordinator,
} from '#runtime';
import { QueueConsumer, type RedisClient } from '#queue';
import { defaultReconcilerConfig, reconcilerConfig } from '#reconciler';
import { configFingerprint, RedisConvergedMarks, RedisSnapshotStore } from '#snapshot';

/**
 * Wires the queue consumer to the BackupJob controller: keys from this worker's shards go to
 * reconcileKey, WORKER_CONCURRENCY at a time, which reads the watcher's snapshots; SIGTERM
 * stops intake and drains.
 */
@Injectable()
export class ReconcileLoop implements OnApplicationBootstrap {
  private readonly consumer: QueueConsumer;
  private readonly reconcileKey: ReconcileKey;
  private readonly converged: RedisConvergedMarks;
  private readonly configFingerprint: string;

  constructor(
    @Inject(CONFIG) private readonly config: WorkerConfig,
    @Inject(LOGGER) private readonly logger: Logger,
    @Inject(METRICS) metrics: OperatorMetrics,
    @Inject(KUBE) kube: KubeConnection,
    @Inject(REDIS) redis: RedisClient,
    @Inject(SHUTDOWN) shutdown: ShutdownCoordinator,
  ) {
    const options = queueOptions(config, metrics.registry);
    const snapshots = new RedisSnapshotStore(redis, options);
    this.converged = new RedisConvergedMarks(redis, options);
    const reconciler = reconcilerConfig({
      defaultImage: config.backupImage,
      allowedImages: config.allowedImages,
      grantRecheckMs: config.grantRecheckMs,
      // A refused BackupJob is looked at no less often than a granted one.
      refusedRecheckMs: Math.min(defaultReconcilerConfig.refusedRecheckMs, config.grantRecheckMs),
    });
    this.configFingerprint = configFingerprint(reconciler);
    const recorder = metrics.controller.forController('backupjob', config.concurrency);
    const reconcileKey = instrumentReconcileKey(
      createReconcileKey({
        kubeConfig: kube.kubeConfig,
        snapshots,
        converged: this.converged,
        config: reconciler,
        grantCacheTtlMs: config.grantCacheTtlMs,
        logger,
        reportingInstance: config.podName,
      }),
      recorder,
    );
    this.reconcileKey = dropInvalidKeys(reconcileKey, logger, recorder);
    this.consumer = new QueueConsumer(options);
    this.consumer.on('leaseLost', (key) =>
      logger.warn('lease lost: another worker took over the key', { key }),
    );
    this.consumer.on('reset', (shards) =>
      logger.warn(
        'the queue lost its data in Redis; its shards take no key for one lock duration',
        {
          shards,
          lockDurationMs: config.queue.lockDurationMs,
        },
      ),
    );
    this.consumer.on('runFailed', (key, err, terminal) =>
      logger.warn('reconcile failed', { key, err, terminal }),
    );
    shutdown.onShutdown('drain', 'queue-consumer', () =>
      this.consumer.shutdown({ drainTimeoutMs: config.shutdownGracePeriodMs }),
    );
  }

  onApplicationBootstrap(): void {
    this.consumer.start({
      shards: this.config.shards,
      concurrency: this.config.concurrency,
      handler: this.reconcileKey,
      name: this.config.podName,
    });
    // Marks made under another configuration stop counting as converged from now on.
    this.converged.publishConfig(this.configFingerprint).catch((err: unknown) => {
      this.logger.warn('could not publish the reconciler configuration; the first mark will', {
        err,
      });
    });
    this.logger.info('consuming keys', {
      shards: this.config.shards.length,
      concurrency: this.config.concurrency,
    });
  }
}
