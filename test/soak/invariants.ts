import type { KubeObject, RequestRecord } from '#apiserver-emulator';
import { cronJobName } from '#reconciler';
import { overlappingRuns, type ReconcileRun } from '#testing';

/** One broken promise, about one object where it has one. */
export interface Violation {
  readonly invariant: string;
  /** The BackupJob's name (or the CronJob's, for an orphan), when it concerns one object. */
  readonly object?: string;
  readonly message: string;
}

type Fields = { schedule?: string; suspend?: boolean; timeZone?: string | null };
type BackupJobView = KubeObject & {
  spec?: Fields;
  status?: {
    observedGeneration?: number;
    conditions?: { type: string; status: string }[];
  };
};
type CronJobView = KubeObject & { spec?: Fields };

/** The cluster as the checks see it: the soak's BackupJobs and the CronJobs of its namespace. */
export interface ClusterView {
  readonly backupJobs: readonly BackupJobView[];
  readonly cronJobs: readonly CronJobView[];
}

/**
 * Every BackupJob carries its latest generation into its CronJob, says so in status, and is
 * owned right; every BackupJob deleted and not made again is gone.
 */
export function checkConverged(view: ClusterView, deleted: readonly string[]): Violation[] {
  const cronJobs = new Map(view.cronJobs.map((c) => [c.metadata.name, c]));
  const out: Violation[] = [];
  const says = (object: string, message: string) =>
    out.push({ invariant: 'converged', object, message });
  for (const bj of view.backupJobs) {
    const name = bj.metadata.name!;
    if (deleted.includes(name)) {
      says(
        name,
        `deleted, but still there${bj.metadata.deletionTimestamp ? ' (finalizer pending)' : ''}`,
      );
      continue;
    }
    const cj = cronJobs.get(cronJobName(name));
    if (!cj) {
      says(name, 'no CronJob');
      continue;
    }
    const want = bj.spec ?? {};
    const have = cj.spec ?? {};
    if (have.schedule !== want.schedule)
      says(name, `CronJob schedule ${have.schedule} ≠ ${want.schedule}`);
    if ((have.suspend ?? false) !== (want.suspend ?? false))
      says(name, `CronJob suspend ${have.suspend ?? false} ≠ ${want.suspend ?? false}`);
    if ((have.timeZone ?? null) !== (want.timeZone ?? null))
      says(name, `CronJob timeZone ${have.timeZone} ≠ ${want.timeZone}`);
    const owner = cj.metadata.ownerReferences?.find((o) => o.controller);
    if (owner?.kind !== 'BackupJob' || owner.uid !== bj.metadata.uid)
      says(name, 'CronJob not controlled by this BackupJob (uid)');
    if (bj.status?.observedGeneration !== bj.metadata.generation) {
      says(
        name,
        `observedGeneration ${bj.status?.observedGeneration} ≠ generation ${bj.metadata.generation}`,
      );
    }
    const ready = bj.status?.conditions?.find((c) => c.type === 'Ready');
    if (ready?.status !== 'True') says(name, `Ready is ${ready?.status ?? 'missing'}`);
  }
  return out;
}

/** Every CronJob the operator made is controlled by a BackupJob that exists, by uid. */
export function checkNoOrphans(view: ClusterView): Violation[] {
  const uids = new Set(view.backupJobs.map((bj) => bj.metadata.uid));
  return view.cronJobs.flatMap((cj) => {
    const owner = cj.metadata.ownerReferences?.find((o) => o.controller);
    if (owner && uids.has(owner.uid)) return [];
    return [
      {
        invariant: 'no orphan CronJob',
        object: cj.metadata.name,
        message: owner
          ? `its owner ${owner.name} (uid ${owner.uid}) is gone`
          : 'no controller owner',
      },
    ];
  });
}

/** The last spec change of every BackupJob was followed by a reconcile that started after it. */
export function checkNoLostUpdate(
  names: readonly string[],
  lastChange: (name: string) => number,
  lastStart: ReadonlyMap<string, number>,
  namespace: string,
): Violation[] {
  return names.flatMap((name) => {
    const changed = lastChange(name);
    const started = lastStart.get(`${namespace}/${name}`) ?? 0;
    if (started > changed) return [];
    return [
      {
        invariant: 'no lost update',
        object: name,
        message: `changed at ${iso(changed)}, no reconcile started since (last ${started ? iso(started) : 'never'})`,
      },
    ];
  });
}

/** No two runs of one key overlapped, on any workers, killed ones included. */
export function checkNoOverlap(runs: readonly ReconcileRun[]): Violation[] {
  return overlappingRuns(runs).map(([a, b]) => ({
    invariant: 'one run of a key at a time',
    object: a.key.slice(a.key.indexOf('/') + 1),
    message: `${a.worker} ${iso(a.start)} … ${iso(a.end)} and ${b.worker} ${iso(b.start)} … ${iso(b.end)}`,
  }));
}

const GUARDED = new Set(['backupjobs', 'cronjobs', 'jobs']);

/**
 * Every update, patch and delete the operator sent to a BackupJob, CronJob or Job carried a
 * precondition (a resourceVersion, or a delete's uid), so no decision made on stale state could
 * overwrite newer state.
 */
export function checkWritesGuarded(
  records: readonly RequestRecord[],
  operatorUser: string,
): Violation[] {
  return records
    .filter((r) => r.user === operatorUser && GUARDED.has(r.resource) && r.precondition === 'none')
    .map((r) => ({
      invariant: 'every write carries its precondition',
      object: r.name,
      message: `${r.verb} ${r.resource}${r.subresource ? `/${r.subresource}` : ''} ${r.name} at ${iso(r.time)} (answered ${r.code}) carried none`,
    }));
}

function iso(ms: number): string {
  return new Date(ms).toISOString();
}
