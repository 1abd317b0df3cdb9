import { createHash } from 'node:crypto';
import type { WorldSnapshot } from './snapshot.js';

/**
 * What a worker learned of one key: its run over exactly these objects (`fingerprint`), under this
 * reconciler configuration (`config`), wrote nothing and asked to come back at `until` (Unix ms).
 * Until then, and while neither the objects nor the configuration change, another run would
 * decide the same: the reconciler is a pure function of the snapshot, the configuration and the
 * clock, and the clock only matters from the RequeueAfter it returned. A resync can skip the key.
 */
export interface ConvergedMark {
  readonly fingerprint: string;
  readonly config: string;
  readonly until: number;
}

/**
 * The objects a snapshot holds, by resourceVersion: any change of the BackupJob, its CronJob or
 * one of its Jobs (one added or gone included) gives another fingerprint, as the server never
 * gives two states the same resourceVersion.
 */
export function worldFingerprint(world: WorldSnapshot): string {
  const jobs = world.jobs.map((job) => job.metadata.resourceVersion ?? '').sort();
  return [
    world.backupJob.metadata.resourceVersion ?? '',
    world.cronJob?.metadata.resourceVersion ?? '',
    jobs.join(','),
  ].join('/');
}

/** A short digest of the reconciler's configuration, the same in every process that has it. */
export function configFingerprint(config: unknown): string {
  return createHash('sha256').update(JSON.stringify(config)).digest('base64url').slice(0, 16);
}

export function encodeMark(mark: ConvergedMark): string {
  return `${mark.until} ${mark.config} ${mark.fingerprint}`;
}

export function decodeMark(text: string): ConvergedMark | undefined {
  const [until, config, fingerprint, ...rest] = text.split(' ');
  if (until === undefined || !config || fingerprint === undefined || rest.length > 0) return;
  const at = Number(until);
  return Number.isFinite(at) ? { until: at, config, fingerprint } : undefined;
}

/**
 * Whether a key whose world now has `fingerprint` needs no run at `now`: its mark is for these
 * objects, made under the configuration the workers run now, and not yet due.
 */
export function isConverged(
  mark: ConvergedMark | undefined,
  fingerprint: string,
  config: string | undefined,
  now: number,
): boolean {
  return (
    mark !== undefined &&
    config !== undefined &&
    mark.config === config &&
    mark.fingerprint === fingerprint &&
    now < mark.until
  );
}

/** Where workers record marks and the watcher reads them. */
export interface ConvergedMarks {
  /** Records a key's mark, and `mark.config` as the configuration the workers run now. */
  record(key: string, mark: ConvergedMark): Promise<void>;
  /** Says which configuration the workers run now (a worker's start). */
  publishConfig(config: string): Promise<void>;
  /** Of these keys, with the fingerprints of their worlds now, those that need no run at `now`. */
  converged(
    entries: readonly (readonly [key: string, fingerprint: string])[],
    now: number,
  ): Promise<Set<string>>;
}
