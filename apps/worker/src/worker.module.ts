import { Module, type DynamicModule } from '@nestjs/common';

/**
 * The worker process: takes keys from the shards in WORKER_SHARDS and reconciles them.
 *
 * Feature modules go into `imports` beside `core`: the queue consumer (libs/queue) and the
 * reconciler with its Kubernetes client (libs/reconciler, libs/kube). They inject the shared
 * tokens from libs/observability/src/nest (CONFIG: WorkerConfig, LOGGER, METRICS, HEALTH,
 * SHUTDOWN, REDIS), register their readiness checks with HEALTH and their stop/drain hooks with
 * SHUTDOWN.
 */
@Module({})
export class WorkerModule {
  static forRoot(core: DynamicModule): DynamicModule {
    return { module: WorkerModule, imports: [core] };
  }
}
