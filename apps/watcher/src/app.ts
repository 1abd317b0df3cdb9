import 'reflect-metadata';
import { loadWatcherConfig } from '#config';
import { runOperatorApp } from '#runtime';
import { WatcherModule } from './watcher.module.js';

await runOperatorApp({
  name: 'watcher',
  loadConfig: loadWatcherConfig,
  module: WatcherModule.forRoot,
});
