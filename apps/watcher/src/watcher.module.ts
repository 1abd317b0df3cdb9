import { Module, type DynamicModule } from '@nestjs/common';

/**
 * The watcher process: only the Lease holder lists and watches and enqueues keys.
 *
 * Feature modules go into `imports` beside `core`: leader election and informers (libs/kube) and
 * the enqueueing side of the queue (libs/queue). They inject the shared tokens from
 * libs/observability/src/nest (CONFIG: WatcherConfig, LOGGER, METRICS, HEALTH, SHUTDOWN, REDIS),
 * register readiness checks (leader or standby, informers synced, watches alive) with HEALTH and
 * "stop informers, release the Lease" with SHUTDOWN.
 */
@Module({})
export class WatcherModule {
  static forRoot(core: DynamicModule): DynamicModule {
    return { module: WatcherModule, imports: [core] };
  }
}
