import { Module, type DynamicModule } from '@nestjs/common';
import { ReconcileLoop } from './reconcile-loop.js';

/** The worker process: takes keys from the shards in WORKER_SHARDS and reconciles them. */
@Module({})
export class WorkerModule {
  static forRoot(core: DynamicModule): DynamicModule {
    return { module: WorkerModule, imports: [core], providers: [ReconcileLoop] };
  }
}
