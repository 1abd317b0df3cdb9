import { createHash } from 'node:crypto';

/**
 * Names of what the operator makes. A CronJob name is limited to 52 characters because the
 * CronJob controller appends an 11-character suffix to name each Job; Job names stay within 63
 * because they become label values on their Pods.
 */
export const CRONJOB_NAME_MAX = 52;
export const JOB_NAME_MAX = 63;
const LABEL_VALUE_MAX = 63;

const HASH_LENGTH = 8;

function shortHash(value: string): string {
  return createHash('sha256').update(value).digest('hex').slice(0, HASH_LENGTH);
}

/** `<head>-<hash>` within `max`; the hash keeps two long names that share a prefix apart. */
function fit(value: string, max: number): string {
  if (value.length <= max) return value;
  const head = value.slice(0, max - HASH_LENGTH - 1).replace(/[-._]+$/, '');
  return `${head}-${shortHash(value)}`;
}

/** `<owner>-<suffix>`, shortening the owner part (never the suffix) when it is too long. */
export function childName(owner: string, suffix: string, max: number): string {
  const full = `${owner}-${suffix}`;
  if (full.length <= max) return full;
  return `${fit(owner, max - suffix.length - 1)}-${suffix}`;
}

export function cronJobName(backupJobName: string): string {
  return childName(backupJobName, 'backup', CRONJOB_NAME_MAX);
}

export function cleanupJobName(backupJobName: string, attempt: number): string {
  return childName(backupJobName, `cleanup-${attempt}`, JOB_NAME_MAX);
}

/** The value of the owner label: the BackupJob name, or a deterministic short form of it. */
export function ownerLabelValue(backupJobName: string): string {
  return fit(backupJobName, LABEL_VALUE_MAX);
}
