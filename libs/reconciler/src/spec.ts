import type { BackupJob } from '#api';
import type { ReconcilerConfig } from './config.js';
import { referencedObjects, type ObjectReference } from './references.js';

/**
 * A BackupJob's spec with every default filled in. The API server applies the schema defaults,
 * but an object written before a default existed (or read from a fake) may lack them.
 */
export interface EffectiveSpec {
  readonly target: string;
  readonly schedule: string;
  readonly retentionDays: number;
  readonly suspend: boolean;
  readonly timeZone: string | undefined;
  readonly image: string;
  readonly secretName: string | undefined;
  readonly claimName: string;
  readonly path: string;
  readonly deletionPolicy: 'Retain' | 'Delete';
  /** The objects the spec names that the namespace must opt in (see permitted.ts). */
  readonly references: readonly ObjectReference[];
}

export function effectiveSpec(backupJob: BackupJob, config: ReconcilerConfig): EffectiveSpec {
  const { spec, metadata } = backupJob;
  return {
    target: spec.target,
    schedule: spec.schedule,
    retentionDays: spec.retentionDays ?? 7,
    suspend: spec.suspend ?? false,
    timeZone: spec.timeZone || undefined,
    image: spec.image || config.defaultImage,
    secretName: spec.secretRef?.name,
    claimName: spec.storage?.claimName ?? config.defaultStorageClaim,
    path: spec.storage?.path ?? `${metadata.namespace}/${metadata.name}`,
    deletionPolicy: spec.deletionPolicy ?? 'Retain',
    references: referencedObjects(spec),
  };
}
