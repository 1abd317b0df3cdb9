import type {
  V1Container,
  V1CronJob,
  V1EnvVar,
  V1Job,
  V1ObjectMeta,
  V1OwnerReference,
  V1PodSpec,
  V1PodTemplateSpec,
  V1Volume,
  V1VolumeMount,
} from '@kubernetes/client-node';
import {
  LABEL_COMPONENT,
  LABEL_MANAGED_BY,
  LABEL_OWNER_NAME,
  MANAGED_BY_VALUE,
  ANNOTATION_OWNER_NAME,
  COMPONENT_BACKUP,
  COMPONENT_CLEANUP,
  LABEL_CLEANUP_ATTEMPT,
  type BackupJob,
} from '#api';
import type { ReconcilerConfig } from './config.js';
import { cleanupJobName, cronJobName, ownerLabelValue } from './names.js';
import type { EffectiveSpec } from './spec.js';

export type BackupMode = 'backup' | 'cleanup';

const CONTAINER_NAME = 'backup';
const STORAGE_VOLUME = 'backup-storage';
const CREDENTIALS_VOLUME = 'credentials';
const TMP_VOLUME = 'tmp';
/** Owner and group read, so fsGroup lets the non-root backup user read the credentials. */
const CREDENTIALS_MODE = 0o440;

function controllerReference(backupJob: BackupJob): V1OwnerReference {
  return {
    apiVersion: backupJob.apiVersion,
    kind: backupJob.kind,
    name: backupJob.metadata.name as string,
    uid: backupJob.metadata.uid as string,
    controller: true,
    blockOwnerDeletion: true,
  };
}

/** Labels by which the watcher finds children and maps them back to their BackupJob. */
function childLabels(backupJob: BackupJob, component: BackupMode): Record<string, string> {
  return {
    [LABEL_MANAGED_BY]: MANAGED_BY_VALUE,
    [LABEL_OWNER_NAME]: ownerLabelValue(backupJob.metadata.name as string),
    [LABEL_COMPONENT]: component,
  };
}

function childAnnotations(backupJob: BackupJob): Record<string, string> {
  return { [ANNOTATION_OWNER_NAME]: backupJob.metadata.name as string };
}

/** The Job label selector that finds every Job made for this BackupJob (backups and cleanups). */
export function jobSelector(backupJobName: string): string {
  return `${LABEL_MANAGED_BY}=${MANAGED_BY_VALUE},${LABEL_OWNER_NAME}=${ownerLabelValue(backupJobName)}`;
}

/** The directory the backup image reads and writes: the volume mount joined with spec.storage.path. */
function destination(spec: EffectiveSpec, config: ReconcilerConfig): string {
  return `${config.storageMountPath.replace(/\/+$/, '')}/${spec.path}`;
}

function env(
  backupJob: BackupJob,
  spec: EffectiveSpec,
  mode: BackupMode,
  config: ReconcilerConfig,
): V1EnvVar[] {
  return [
    { name: 'BACKUP_MODE', value: mode },
    { name: 'BACKUP_TARGET', value: spec.target },
    { name: 'BACKUP_RETENTION_DAYS', value: String(spec.retentionDays) },
    { name: 'BACKUP_DESTINATION', value: destination(spec, config) },
    { name: 'BACKUP_NAME', value: backupJob.metadata.name as string },
    { name: 'BACKUP_NAMESPACE', value: backupJob.metadata.namespace as string },
    { name: 'BACKUP_CREDENTIALS_DIR', value: config.credentialsMountPath },
  ];
}

function volumes(spec: EffectiveSpec): V1Volume[] {
  const list: V1Volume[] = [
    { name: STORAGE_VOLUME, persistentVolumeClaim: { claimName: spec.claimName } },
    { name: TMP_VOLUME, emptyDir: {} },
  ];
  if (spec.secretName) {
    list.push({
      name: CREDENTIALS_VOLUME,
      secret: { secretName: spec.secretName, defaultMode: CREDENTIALS_MODE },
    });
  }
  return list;
}

function volumeMounts(spec: EffectiveSpec, config: ReconcilerConfig): V1VolumeMount[] {
  const list: V1VolumeMount[] = [
    { name: STORAGE_VOLUME, mountPath: config.storageMountPath },
    // A read-only root file system still needs scratch space for dump tools.
    { name: TMP_VOLUME, mountPath: '/tmp' },
  ];
  if (spec.secretName) {
    list.push({ name: CREDENTIALS_VOLUME, mountPath: config.credentialsMountPath, readOnly: true });
  }
  return list;
}

function container(
  backupJob: BackupJob,
  spec: EffectiveSpec,
  mode: BackupMode,
  config: ReconcilerConfig,
): V1Container {
  return {
    name: CONTAINER_NAME,
    image: spec.image,
    env: env(backupJob, spec, mode, config),
    volumeMounts: volumeMounts(spec, config),
    resources: {
      requests: { ...config.resources.requests },
      limits: { ...config.resources.limits },
    },
    securityContext: {
      allowPrivilegeEscalation: false,
      readOnlyRootFilesystem: true,
      runAsNonRoot: true,
      capabilities: { drop: ['ALL'] },
      seccompProfile: { type: 'RuntimeDefault' },
    },
  };
}

function podSpec(
  backupJob: BackupJob,
  spec: EffectiveSpec,
  mode: BackupMode,
  config: ReconcilerConfig,
): V1PodSpec {
  return {
    restartPolicy: 'Never',
    // The backup pod never talks to the Kubernetes API.
    automountServiceAccountToken: false,
    securityContext: {
      runAsNonRoot: true,
      runAsUser: config.runAsUser,
      runAsGroup: config.runAsGroup,
      fsGroup: config.fsGroup,
      seccompProfile: { type: 'RuntimeDefault' },
    },
    containers: [container(backupJob, spec, mode, config)],
    volumes: volumes(spec),
  };
}

function childMeta(backupJob: BackupJob, mode: BackupMode): V1ObjectMeta {
  return { labels: childLabels(backupJob, mode), annotations: childAnnotations(backupJob) };
}

function podTemplate(
  backupJob: BackupJob,
  spec: EffectiveSpec,
  mode: BackupMode,
  config: ReconcilerConfig,
): V1PodTemplateSpec {
  return { metadata: childMeta(backupJob, mode), spec: podSpec(backupJob, spec, mode, config) };
}

export function desiredCronJob(
  backupJob: BackupJob,
  spec: EffectiveSpec,
  config: ReconcilerConfig,
): V1CronJob {
  return {
    apiVersion: 'batch/v1',
    kind: 'CronJob',
    metadata: {
      name: cronJobName(backupJob.metadata.name as string),
      namespace: backupJob.metadata.namespace as string,
      ...childMeta(backupJob, 'backup'),
      ownerReferences: [controllerReference(backupJob)],
    },
    spec: {
      schedule: spec.schedule,
      timeZone: spec.timeZone,
      suspend: spec.suspend,
      concurrencyPolicy: 'Forbid',
      successfulJobsHistoryLimit: config.successfulJobsHistoryLimit,
      failedJobsHistoryLimit: config.failedJobsHistoryLimit,
      startingDeadlineSeconds: config.startingDeadlineSeconds,
      jobTemplate: {
        metadata: childMeta(backupJob, COMPONENT_BACKUP),
        spec: {
          backoffLimit: config.backoffLimit,
          activeDeadlineSeconds: config.activeDeadlineSeconds,
          template: podTemplate(backupJob, spec, 'backup', config),
        },
      },
    },
  };
}

/** A one-off Job that removes the stored backups, with the same storage mount as the backups. */
export function desiredCleanupJob(
  backupJob: BackupJob,
  spec: EffectiveSpec,
  attempt: number,
  config: ReconcilerConfig,
): V1Job {
  const meta = childMeta(backupJob, COMPONENT_CLEANUP);
  return {
    apiVersion: 'batch/v1',
    kind: 'Job',
    metadata: {
      name: cleanupJobName(backupJob.metadata.name as string, attempt),
      namespace: backupJob.metadata.namespace as string,
      labels: { ...meta.labels, [LABEL_CLEANUP_ATTEMPT]: String(attempt) },
      annotations: meta.annotations,
      ownerReferences: [controllerReference(backupJob)],
    },
    spec: {
      backoffLimit: config.cleanupBackoffLimit,
      activeDeadlineSeconds: config.cleanupActiveDeadlineSeconds,
      template: podTemplate(backupJob, spec, 'cleanup', config),
    },
  };
}
