/** Identity of the BackupJob API and the names the operator stamps on what it owns. */
export const GROUP = 'ops.example.com';
export const VERSION = 'v1alpha1';
export const API_VERSION = `${GROUP}/${VERSION}`;
export const KIND = 'BackupJob';
export const LIST_KIND = 'BackupJobList';
export const PLURAL = 'backupjobs';
export const SINGULAR = 'backupjob';
export const SHORT_NAMES = ['bj'];
export const CATEGORIES = ['all', 'backup'];
export const CRD_NAME = `${PLURAL}.${GROUP}`;
/** Where BackupJobs live in the REST API (client-go's GroupVersionResource). */
export const BACKUPJOBS = { group: GROUP, version: VERSION, plural: PLURAL } as const;

export const FINALIZER = 'backup.ops.example.com/finalizer';

/** Labels on every child, so the watcher can select children and map them back to their owner. */
export const LABEL_MANAGED_BY = 'app.kubernetes.io/managed-by';
export const MANAGED_BY_VALUE = 'backupjob-operator';
export const LABEL_OWNER_NAME = 'backup.ops.example.com/backupjob';
export const LABEL_COMPONENT = 'app.kubernetes.io/component';
/** Carries the full BackupJob name when the owner label had to be shortened to fit 63 characters. */
export const ANNOTATION_OWNER_NAME = 'backup.ops.example.com/backupjob-name';
/** The attempt number of a cleanup Job, so retries are ordered without reading the clock. */
export const LABEL_CLEANUP_ATTEMPT = 'backup.ops.example.com/cleanup-attempt';
/** Values of LABEL_COMPONENT: which of the operator's Jobs a pod belongs to. */
export const COMPONENT_BACKUP = 'backup';
export const COMPONENT_CLEANUP = 'cleanup';
