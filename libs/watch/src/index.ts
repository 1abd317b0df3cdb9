/**
 * The watcher process's side of the operator: while it leads, informers on BackupJobs and their
 * CronJobs and Jobs map every relevant change to its BackupJob's `namespace/name` key, write that
 * BackupJob's snapshot and hand the key to the queue. It mirrors controller-runtime's source,
 * handler and predicate packages and its manager's leader election, with the workqueue in Redis.
 */
export { backupJobKeyOfCronJob, backupJobKeyOfJob } from './handler.js';
export type { KeySink } from './key-pump.js';
export { KeySource } from './key-source.js';
export { Manager } from './manager.js';
export { backupJobUpdatePredicate } from './predicate.js';
export { stripBackupJob, stripCronJob, stripJob, withoutWriters } from './transform.js';
