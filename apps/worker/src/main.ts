import 'reflect-metadata';
import { loadWorkerConfig } from '../../../libs/config/src/index.js';
import { runOperatorApp } from '../../../libs/runtime/src/index.js';
import { WorkerModule } from './worker.module.js';

await runOperatorApp({
  name: 'worker',
  loadConfig: loadWorkerConfig,
  module: WorkerModule.forRoot,
});
