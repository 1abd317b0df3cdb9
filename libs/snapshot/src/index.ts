// The watcher's informer view of each BackupJob, kept in Redis beside its queue shard so any worker
// reads it with one GET instead of asking the API server. client-go's informer cache (the Indexer
// a controller's client reads), shared between processes, with writes fenced by leader term.
export * from './redis-snapshot-store.js';
export * from './snapshot.js';
export * from './converged.js';
export * from './redis-converged-marks.js';
