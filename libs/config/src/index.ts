export { ConfigError, type Env } from './env-reader.js';
export { parseDuration } from './duration.js';
export * from './common.js';
export * from './redis.js';
export * from './watcher.js';
export * from './worker.js';
export { configSummary } from './summary.js';
