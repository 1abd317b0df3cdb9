/**
 * The watcher process's side of the operator: while it leads, informers on BackupJobs and their
 * CronJobs and Jobs map every relevant change to its BackupJob's `namespace/name` key, write that
 * BackupJob's snapshot and hand the key to the queue. It mirrors controller-runtime's source,
 * handler and predicate packages and its manager's leader election, with the workqueue in Redis.
 */
export {
  backupJobKeyOfCronJob,
  backupJobKeyOfJob,
  controllerOf,
  type CronJobLookup,
} from './handler.js';
export { KeyPump, type KeySink, type KeyPumpOptions } from './key-pump.js';
export { CHILD_SELECTOR, KeySource, type KeySourceOptions } from './key-source.js';
export { Manager, type ManagerOptions, type ManagerStatus } from './manager.js';
export { backupJobUpdatePredicate, cronJobUpdatePredicate } from './predicate.js';
export { stripBackupJob, stripCronJob, stripJob, withoutWriters } from './transform.js';
