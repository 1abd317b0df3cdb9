// What starts and stops an operator process: config, logs, metrics and probe servers, the Redis
// and Kubernetes connections, health checks and graceful shutdown, wired with NestJS. The role of
// controller-runtime's Manager, without the controllers it would own: the apps bring those.
export * from './tokens.js';
export { runOperatorApp } from './bootstrap.js';
export type { KubeConnection } from './kube.provider.js';
export * from './health.js';
export * from './shutdown.js';
export { exitAfterFlush } from './exit.js';
export { queueOptions } from './queue-options.js';
