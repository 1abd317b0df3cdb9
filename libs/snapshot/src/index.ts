export * from './redis-snapshot-store.js';
export * from './snapshot.js';
