// Test and bench support: real Redis in every topology (standalone, Cluster, Sentinel) with its
// faults, child processes awaited by log line, and the whole operator (emulator, Redis, watchers,
// workers) in one call. Our envtest, except that it runs the shipped entry points, not a manager.
export * from './wait.js';
export * from './ports.js';
export * from './process.js';
export * from './redis-server.js';
export * from './redis-cluster.js';
export * from './operator-system.js';
export * from './command.js';
export * from './tcp-proxy.js';
export * from './redis-sentinel.js';
export * from './redis-deployment.js';
export * from './redis-faults.js';
export * from './reconcile-log.js';
export * from './objects.js';
