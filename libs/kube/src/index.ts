/**
 * A small Kubernetes client for controllers, with no knowledge of BackupJobs: a REST client, the
 * list-watch loop, reflector and shared informer (client-go's tools/cache, kube-rs' watcher and
 * reflector), predicates, backoff, and leader election through a Lease (client-go's
 * leaderelection). It imports no other library of the project.
 */
export { Backoff, sleep, type BackoffOptions } from './backoff.js';
export { apiServerUrl, loadKubeConfig } from './client.js';
export { reuseConnections } from './connection-reuse.js';
export {
  DEFAULT_RESYNC_PERIOD_MS,
  Informer,
  type EventHandler,
  type InformerOptions,
} from './informer.js';
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
export {
  ListWatch,
  listWatchDefaults,
  type ListWatchOptions,
  type WatchEvent,
} from './list-watch.js';
export { errorFields, silentLog, type Log, type LogFields } from './log.js';
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
export * from './types.js';
export { apiServerCheck } from './apiserver-check.js';
