// Each process's environment, parsed once at start into one read-only typed object, every bad
// value named at once. What controller-runtime's manager.Options and a controller's flags hold,
// read from environment variables because that is how the chart and Compose configure a pod.
export { ConfigError, type Env } from './env-reader.js';
export { parseDuration } from './duration.js';
export * from './common.js';
export * from './redis.js';
export * from './watcher.js';
export * from './worker.js';
export { configSummary } from './summary.js';
