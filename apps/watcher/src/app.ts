import 'reflect-metadata';
import { loadWatcherConfig } from '#config';
import { runOperatorApp } from '#runtime';
import { WatcherModule } from './watcher.module.js';

/** The watcher process; main.ts starts it from the bundle `npm run build` makes of this file. */
export function start(): Promise<void> {
  return runOperatorApp({
    name: 'watcher',
    loadConfig: loadWatcherConfig,
    module: WatcherModule.forRoot,
  });
}
