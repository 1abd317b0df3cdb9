/**
 * A small Kubernetes client for controllers, with no knowledge of BackupJobs: a REST client, the
 * list-watch loop, reflector and shared informer (client-go's tools/cache, kube-rs' watcher and
 * reflector), predicates, backoff, and leader election through a Lease (client-go's
 * leaderelection). It imports no other library of the project.
 */
export { Backoff, sleep, type BackoffOptions } from './backoff.js';
export { apiServerUrl, loadKubeConfig } from './client.js';
export { Informer, type EventHandler } from './informer.js';
export {
  LeaderElector,
  type LeaderElectorOptions,
  type LeaderStatusGauge,
  type StoppedReason,
} from './leaderelection.js';
export { errorFields, silentLog, type Log } from './log.js';
export * from './predicate.js';
export * from './resource.js';
export { isApiError, KubeApiError, RestClient, type RequestOptions } from './rest.js';
export { parseRetryAfter } from './retry-after.js';
export * from './types.js';
export { apiServerCheck } from './apiserver-check.js';
