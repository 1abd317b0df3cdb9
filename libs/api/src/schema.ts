import type { JSONSchemaProps } from './json-schema.js';

/**
 * The one schema of BackupJob. Everything else that describes the resource (the TypeScript types,
 * the CRD in config/ and in the chart, docs/api.md) is generated from it by `npm run gen`.
 *
 * It is written directly as a CRD structural schema rather than in a schema DSL: the CRD is the
 * contract the API server enforces, so keeping the source in that exact shape means no translation
 * layer can drift from what the cluster validates. Objects carry a `title` where the generated
 * TypeScript should name the type.
 */

// A 5-field cron line (each field made of digits, names, `*`, `?`, `/`, `,`, `-`) or one of the
// macros Kubernetes' CronJob parser accepts. The reconciler parses the expression fully; the
// pattern rejects the obvious mistakes at admission so `kubectl apply` names the field.
const CRON_FIELD = '[0-9A-Za-z*?/,-]+';
const SCHEDULE_PATTERN = `^(@(yearly|annually|monthly|weekly|daily|midnight|hourly)|${CRON_FIELD}( +${CRON_FIELD}){4})$`;

const conditionSchema: JSONSchemaProps = {
  type: 'object',
  title: 'Condition',
  description:
    'One aspect of the current state, in the shape of metav1.Condition: lastTransitionTime moves only when status changes.',
  required: ['type', 'status', 'lastTransitionTime', 'reason', 'message'],
  properties: {
    type: {
      type: 'string',
      description: 'Ready, BackupSucceeded, BackupOverdue or CleanupSucceeded.',
      maxLength: 316,
      pattern:
        '^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*/)?(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])$',
    },
    status: {
      type: 'string',
      enum: ['True', 'False', 'Unknown'],
      description: 'True, False or Unknown.',
    },
    observedGeneration: {
      type: 'integer',
      format: 'int64',
      minimum: 0,
      description: 'The metadata.generation the condition was computed from.',
    },
    lastTransitionTime: {
      type: 'string',
      format: 'date-time',
      description: 'When status last changed.',
    },
    reason: {
      type: 'string',
      minLength: 1,
      maxLength: 1024,
      pattern: '^[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?$',
      description: 'A CamelCase word a program can match on.',
    },
    message: { type: 'string', maxLength: 32768, description: 'What a person should know.' },
  },
};

export const specSchema: JSONSchemaProps = {
  type: 'object',
  title: 'BackupJobSpec',
  description: 'What to back up, when, and how long to keep it.',
  required: ['target', 'schedule'],
  properties: {
    target: {
      type: 'string',
      minLength: 1,
      maxLength: 253,
      description:
        'What is backed up, handed to the backup image as BACKUP_TARGET. The reference image understands an engine name (mysql, mariadb, postgres, postgresql), optionally as a URL such as postgres://db.ops.svc:5432/app.',
    },
    schedule: {
      type: 'string',
      maxLength: 128,
      pattern: SCHEDULE_PATTERN,
      description:
        'When backups run: a 5-field cron expression ("10 2 * * *") or @hourly, @daily, @weekly, @monthly, @yearly. Time zone comes from timeZone, never from the expression.',
    },
    retentionDays: {
      type: 'integer',
      format: 'int32',
      minimum: 1,
      maximum: 3650,
      default: 7,
      description: 'Backups older than this many days are pruned by every successful backup run.',
    },
    suspend: {
      type: 'boolean',
      default: false,
      description:
        'Stops scheduling new backups (the CronJob is suspended); existing backups are kept.',
    },
    timeZone: {
      type: 'string',
      maxLength: 64,
      pattern: '^[A-Za-z0-9_+-]+(/[A-Za-z0-9_+-]+)*$',
      description:
        'IANA time zone the schedule is read in, such as Europe/Berlin; the cluster controller-manager time zone when unset.',
    },
    image: {
      type: 'string',
      minLength: 1,
      maxLength: 1024,
      description:
        "Container image that performs the backup; the operator's configured reference image when unset. It must be one the operator's allowlist admits and honour the backup image contract (docs/backup-image.md).",
    },
    secretRef: {
      type: 'object',
      title: 'SecretReference',
      description:
        'A Secret in the same namespace with the credentials for the target (keys host, port, username, password, database). It is mounted into the backup pod only if the namespace opted it in (docs/security.md); the operator never reads it.',
      required: ['name'],
      properties: {
        name: {
          type: 'string',
          minLength: 1,
          maxLength: 253,
          pattern: '^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$',
          description: 'Name of the Secret.',
        },
      },
    },
    storage: {
      type: 'object',
      title: 'BackupStorage',
      description:
        'Where backups are written: a PersistentVolumeClaim in the same namespace, and a folder in it. The claim is mounted only if the namespace opted it in (docs/security.md). When unset, the claim the operator is configured with (backup-storage) and the folder <namespace>/<name>, with no opt-in needed.',
      required: ['claimName'],
      properties: {
        claimName: {
          type: 'string',
          minLength: 1,
          maxLength: 253,
          pattern: '^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$',
          description:
            'Name of the PersistentVolumeClaim that holds the backups; mounted only if the namespace opted it in (docs/security.md).',
        },
        path: {
          type: 'string',
          maxLength: 512,
          pattern: '^[A-Za-z0-9._-]+(/[A-Za-z0-9._-]+)*$',
          description: 'Folder inside the volume, relative; <namespace>/<name> when unset.',
        },
      },
      'x-kubernetes-validations': [
        {
          rule: "!has(self.path) || !self.path.matches('(^|/)[.][.]?(/|$)')",
          message: 'path must not contain . or .. segments',
          fieldPath: '.path',
        },
      ],
    },
    deletionPolicy: {
      type: 'string',
      enum: ['Retain', 'Delete'],
      default: 'Retain',
      description:
        'What happens to stored backups when the BackupJob is deleted: Retain keeps them; Delete runs a cleanup Job that removes them before the BackupJob goes away.',
    },
  },
};

export const statusSchema: JSONSchemaProps = {
  type: 'object',
  title: 'BackupJobStatus',
  description: 'What the operator observed, written only by the operator.',
  properties: {
    ready: {
      type: 'boolean',
      description:
        'True when the CronJob matches the spec and nothing stands in the way of backups.',
    },
    lastBackupTime: {
      type: 'string',
      format: 'date-time',
      description: 'When the last successful backup finished.',
    },
    lastFailureTime: {
      type: 'string',
      format: 'date-time',
      description: 'When the last failed backup ended.',
    },
    lastScheduleTime: {
      type: 'string',
      format: 'date-time',
      description: 'When the CronJob last started a backup.',
    },
    message: { type: 'string', maxLength: 32768, description: 'A one-line summary for people.' },
    observedGeneration: {
      type: 'integer',
      format: 'int64',
      minimum: 0,
      description: 'The metadata.generation this status describes.',
    },
    cronJobName: {
      type: 'string',
      maxLength: 253,
      description: 'Name of the CronJob the operator keeps.',
    },
    conditions: {
      type: 'array',
      description: 'Ready, BackupSucceeded, BackupOverdue and, while deleting, CleanupSucceeded.',
      maxItems: 16,
      items: conditionSchema,
      'x-kubernetes-list-type': 'map',
      'x-kubernetes-list-map-keys': ['type'],
    },
  },
};

export const backupJobSchema: JSONSchemaProps = {
  type: 'object',
  title: 'BackupJob',
  description: 'A scheduled backup of one target, carried out by a CronJob the operator keeps.',
  required: ['spec'],
  properties: {
    apiVersion: { type: 'string', description: 'ops.example.com/v1alpha1' },
    kind: { type: 'string', description: 'BackupJob' },
    metadata: { type: 'object' },
    spec: specSchema,
    status: statusSchema,
  },
};

/** Columns `kubectl get backupjob` prints, in order. */
export const printerColumns = [
  { name: 'Target', type: 'string', jsonPath: '.spec.target' },
  { name: 'Schedule', type: 'string', jsonPath: '.spec.schedule' },
  { name: 'Ready', type: 'boolean', jsonPath: '.status.ready' },
  { name: 'Last Backup', type: 'date', jsonPath: '.status.lastBackupTime' },
  { name: 'Age', type: 'date', jsonPath: '.metadata.creationTimestamp' },
] as const;
