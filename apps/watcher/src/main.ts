import 'reflect-metadata';
import { loadWatcherConfig } from '../../../libs/config/src/index.js';
import { runOperatorApp } from '../../../libs/runtime/src/index.js';
import { WatcherModule } from './watcher.module.js';

await runOperatorApp({
  name: 'watcher',
  loadConfig: loadWatcherConfig,
  module: WatcherModule.forRoot,
});
