// The BackupJob controller's I/O around the pure reconciler: read the snapshot, decide, write with
// resourceVersion preconditions, record Events, and map the outcome onto the queue. The part of
// controller-runtime's controller that turns a Reconcile result into a requeue, with its client
// and EventRecorder, and its controller_runtime_* metrics.
export * from './api-error.js';
export * from './clients.js';
export * from './event-recorder.js';
export * from './executor.js';
export * from './reconcile-key.js';
export * from './grant-review.js';
export * from './instrumented.js';
export * from './key-guard.js';
export * from './backupjob-metrics.js';
