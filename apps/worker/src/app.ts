import 'reflect-metadata';
import { loadWorkerConfig } from '#config';
import { runOperatorApp } from '#runtime';
import { WorkerModule } from './worker.module.js';

await runOperatorApp({
  name: 'worker',
  loadConfig: loadWorkerConfig,
  module: WorkerModule.forRoot,
});
