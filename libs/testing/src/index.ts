export * from './eventually.js';
export * from './ports.js';
export * from './process.js';
export * from './redis-server.js';
export * from './redis-cluster.js';
export * from './operator-system.js';
export * from './command.js';
export * from './tcp-proxy.js';
