/** Operator-wide settings that shape every CronJob and cleanup Job (not per BackupJob). */
export interface ReconcilerConfig {
  /** Image of the backup container when a BackupJob names none; always allowed. */
  readonly defaultImage: string;
  /**
   * Image patterns a BackupJob's spec.image may name besides defaultImage (see images.ts): the
   * pod runs with the operator's power to mount Secrets, so the operator chooses what runs.
   */
  readonly allowedImages: readonly string[];
  /** PersistentVolumeClaim used when spec.storage is unset. */
  readonly defaultStorageClaim: string;
  /** Where the storage volume is mounted in the backup container. */
  readonly storageMountPath: string;
  /** Where the secretRef Secret is mounted (BACKUP_CREDENTIALS_DIR). */
  readonly credentialsMountPath: string;
  /** The time zone Kubernetes reads a schedule in when spec.timeZone is unset. */
  readonly defaultTimeZone: string;
  readonly successfulJobsHistoryLimit: number;
  readonly failedJobsHistoryLimit: number;
  readonly startingDeadlineSeconds: number;
  readonly backoffLimit: number;
  readonly activeDeadlineSeconds: number;
  readonly cleanupBackoffLimit: number;
  readonly cleanupActiveDeadlineSeconds: number;
  /**
   * The backup pod runs as the image's own (numeric, non-root) USER unless these are set: images
   * such as the reference one need their user to exist in /etc/passwd, so forcing one could
   * break them. fsGroup is added to the pod's groups and makes the volume and the Secret usable.
   */
  readonly runAsUser?: number;
  readonly runAsGroup?: number;
  readonly fsGroup: number;
  readonly resources: {
    readonly requests: Readonly<Record<string, string>>;
    readonly limits: Readonly<Record<string, string>>;
  };
  /**
   * How long after a scheduled time a successful backup may still arrive before it is overdue.
   * Unset: startingDeadlineSeconds + activeDeadlineSeconds, the latest a scheduled Job can succeed.
   */
  readonly overdueGraceMs?: number;
  /** How often a running cleanup Job is looked at. */
  readonly cleanupPollMs: number;
  /** Delay before the first retry of a failed cleanup; doubles per attempt up to the max. */
  readonly cleanupRetryBaseMs: number;
  readonly cleanupRetryMaxMs: number;
  /** How often a name conflict is looked at again (the foreign CronJob may go away). */
  readonly conflictRequeueMs: number;
  /**
   * How often a refused BackupJob (image, Secret or claim) is looked at again: neither a grant
   * nor a wider image list makes an event the watcher sees.
   */
  readonly refusedRecheckMs: number;
  /**
   * How often a BackupJob that uses an opted-in Secret or claim, or an image other than the
   * default, is looked at again, so that a withdrawn grant (or a narrowed image list) suspends
   * its CronJob within this time plus the controller's answer cache.
   */
  readonly grantRecheckMs: number;
  /** Upper bound of any RequeueAfter, so every key is looked at at least this often. */
  readonly maxRequeueMs: number;
}

export const defaultReconcilerConfig: ReconcilerConfig = {
  defaultImage: 'ghcr.io/example/backupjob-backup:0.1.0',
  allowedImages: [],
  defaultStorageClaim: 'backup-storage',
  storageMountPath: '/backups',
  credentialsMountPath: '/var/run/secrets/backup',
  defaultTimeZone: 'UTC',
  successfulJobsHistoryLimit: 3,
  failedJobsHistoryLimit: 3,
  startingDeadlineSeconds: 300,
  backoffLimit: 2,
  activeDeadlineSeconds: 3600,
  cleanupBackoffLimit: 2,
  cleanupActiveDeadlineSeconds: 1800,
  fsGroup: 10001,
  resources: {
    requests: { cpu: '100m', memory: '128Mi' },
    limits: { cpu: '1', memory: '512Mi' },
  },
  cleanupPollMs: 5_000,
  cleanupRetryBaseMs: 10_000,
  cleanupRetryMaxMs: 300_000,
  conflictRequeueMs: 300_000,
  refusedRecheckMs: 60_000,
  grantRecheckMs: 300_000,
  maxRequeueMs: 10 * 60 * 60 * 1000,
};

export function reconcilerConfig(overrides: Partial<ReconcilerConfig> = {}): ReconcilerConfig {
  return { ...defaultReconcilerConfig, ...overrides };
}

export function overdueGraceMs(config: ReconcilerConfig): number {
  return (
    config.overdueGraceMs ?? (config.startingDeadlineSeconds + config.activeDeadlineSeconds) * 1000
  );
}
