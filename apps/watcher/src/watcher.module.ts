import { Module, type DynamicModule } from '@nestjs/common';
import { WatchLoop } from './watch-loop.js';

/** The watcher process: only the Lease holder lists and watches and enqueues keys. */
@Module({})
export class WatcherModule {
  static forRoot(core: DynamicModule): DynamicModule {
    return { module: WatcherModule, imports: [core], providers: [WatchLoop] };
  }
}
