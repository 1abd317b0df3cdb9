export * from './ports.js';
export * from './redis-server.js';
