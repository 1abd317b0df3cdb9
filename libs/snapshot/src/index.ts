export * from './redis-snapshot-store.js';
