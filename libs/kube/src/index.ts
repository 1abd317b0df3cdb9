export { Backoff, sleep, defaultBackoff, type BackoffOptions } from './backoff.js';
export { apiServerUrl, loadKubeConfig } from './client.js';
export { reuseConnections } from './connection-reuse.js';
export {
  backupJobKeyOfCronJob,
  backupJobKeyOfJob,
  controllerOf,
  type CronJobLookup,
} from './handler.js';
export {
  DEFAULT_RESYNC_PERIOD_MS,
  Informer,
  type EventHandler,
  type InformerOptions,
} from './informer.js';
export { KeyPump, type KeySink, type KeyPumpOptions } from './key-pump.js';
export {
  LeaderElector,
  leaderElectionDefaults,
  validateTimings,
  type LeaderCallbacks,
  type LeaderElectorOptions,
  type LeaderStatusGauge,
  type StoppedReason,
} from './leaderelection.js';
export { LeaseObserver } from './lease-observer.js';
export { silentLog, type Log, type LogFields } from './log.js';
export { WatcherManager, type WatcherManagerOptions, type WatcherStatus } from './manager.js';
export * from './predicate.js';
export { Reflector, type Delta } from './reflector.js';
export * from './resource.js';
export {
  LeaseLock,
  microTime,
  recordOf,
  type Lease,
  type LeaderElectionRecord,
} from './resourcelock.js';
export { isApiError, KubeApiError, RestClient, type RequestOptions, type Status } from './rest.js';
export { parseRetryAfter } from './retry-after.js';
export type { SnapshotReader, SnapshotStore, WorldSnapshot } from './snapshot.js';
export { stripBackupJob, stripCronJob, stripJob, withoutWriters } from './transform.js';
export * from './types.js';
export {
  CHILD_SELECTOR,
  WatcherController,
  type WatcherControllerOptions,
} from './watcher-controller.js';
export { Watcher, watcherDefaults, type WatcherEvent, type WatcherOptions } from './watcher.js';
export { apiServerCheck } from './apiserver-check.js';
