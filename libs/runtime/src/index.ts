export * from './tokens.js';
export { runOperatorApp } from './bootstrap.js';
export type { KubeConnection } from './kube.provider.js';
export * from './health.js';
export * from './shutdown.js';
export { exitAfterFlush } from './exit.js';
export { queueOptions } from './queue-options.js';
