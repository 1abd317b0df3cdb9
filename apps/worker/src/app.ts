import 'reflect-metadata';
import { loadWorkerConfig } from '#config';
import { runOperatorApp } from '#runtime';
import { WorkerModule } from './worker.module.js';

/** The worker process; main.ts starts it from the bundle `npm run build` makes of this file. */
export function start(): Promise<void> {
  return runOperatorApp({
    name: 'worker',
    loadConfig: loadWorkerConfig,
    module: WorkerModule.forRoot,
  });
}
