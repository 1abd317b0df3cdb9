import type { BackupJob } from '#api';
import { gaugeFamilyChunks, type GaugeSample, type MetricsTextSource } from '#observability';
import {
  BACKUP_RESULTS,
  backupJobState,
  type BackupJobState,
  type BackupResult,
  type ReconcilerConfig,
} from '#reconciler';

export interface BackupJobMetricsOptions {
  /**
   * The BackupJobs of the leader's synced informer cache; undefined while this process has none
   * (a standby, or a leader still listing), which exports no backupjob_* series at all.
   */
  readonly backupJobs: () => Iterable<BackupJob> | undefined;
  /** For the default time zone of the next-run computation. */
  readonly config: ReconcilerConfig;
  readonly clock?: () => Date;
}

/**
 * What is kept of one BackupJob's state between scrapes: its times as Unix seconds. A Date is an
 * object of its own, and the state with its two took about four times the heap of this.
 */
interface KeptState {
  readonly namespace: string;
  readonly name: string;
  readonly ready: boolean;
  readonly lastSuccessfulBackup: number | undefined;
  readonly lastBackupResult: BackupResult;
  readonly overdue: boolean;
  readonly nextScheduledRun: number | undefined;
}

const seconds = (date: Date | undefined) => date && date.getTime() / 1000;

const kept = (state: BackupJobState): KeptState => ({
  ...state,
  lastSuccessfulBackup: seconds(state.lastSuccessfulBackup),
  nextScheduledRun: seconds(state.nextScheduledRun),
});

interface FamilyOf {
  readonly name: string;
  readonly help: string;
  samples(state: KeptState): GaugeSample[];
}

const of = (s: KeptState) => ({ namespace: s.namespace, name: s.name });

/** A 1-or-0 gauge per BackupJob. */
const flag = (name: string, help: string, pick: (s: KeptState) => boolean): FamilyOf => ({
  name,
  help,
  samples: (s) => [{ labels: of(s), value: pick(s) ? 1 : 0 }],
});

/** A Unix-time gauge per BackupJob, absent while there is no such time. */
const time = (
  name: string,
  help: string,
  pick: (s: KeptState) => number | undefined,
): FamilyOf => ({
  name,
  help,
  samples: (s) => {
    const at = pick(s);
    return at === undefined ? [] : [{ labels: of(s), value: at }];
  },
});

const FAMILIES: readonly FamilyOf[] = [
  flag(
    'backupjob_ready',
    'Whether the BackupJob is Ready (its Ready condition is True): 1 or 0.',
    (s) => s.ready,
  ),
  time(
    'backupjob_last_successful_backup_timestamp_seconds',
    'Unix time the last successful backup finished (status.lastBackupTime); absent before the first.',
    (s) => s.lastSuccessfulBackup,
  ),
  {
    name: 'backupjob_last_backup_result',
    help: 'The result of the newest finished backup (BackupSucceeded condition): 1 for the current result, 0 for the others.',
    samples: (s) =>
      BACKUP_RESULTS.map((result) => ({
        labels: { ...of(s), result },
        value: s.lastBackupResult === result ? 1 : 0,
      })),
  },
  flag(
    'backupjob_backup_overdue',
    'Whether a scheduled backup is overdue (BackupOverdue condition is True): 1 or 0.',
    (s) => s.overdue,
  ),
  time(
    'backupjob_next_scheduled_run_timestamp_seconds',
    'Unix time of the next scheduled backup from spec.schedule and spec.timeZone; absent when suspended or invalid.',
    (s) => s.nextScheduledRun,
  ),
];

/** A family's samples over every object, made as the exposition is written. */
function* samplesOf(family: FamilyOf, states: readonly KeptState[]): Generator<GaugeSample> {
  for (const state of states) yield* family.samples(state);
}

/** Until when an object's state holds: only the next run depends on the clock. */
const holdsUntil = (state: KeptState) => (state.nextScheduledRun ?? Infinity) * 1000;

/**
 * Per-BackupJob metrics from the watcher's informer cache, as kube-state-metrics computes its
 * metrics from objects: a deleted BackupJob's series are gone at the next scrape, and only the
 * leader (the one process with a cache) exports them.
 *
 * Each object's state is computed once and kept beside it, keyed by the object itself: the
 * informer replaces an object on every change, so a changed BackupJob is looked at anew and a
 * deleted one's state goes with it. Only the next run depends on the clock, and it holds until it
 * passes. A scrape of tens of thousands of BackupJobs thus formats lines from kept values rather
 * than running a schedule evaluation and schema check per object, which would hold the leader's
 * event loop (and its Lease renewal) for as long as it took. The lines themselves are not kept
 * (as text they took four times the memory of the state they come from, for every BackupJob), and
 * they are made chunk by chunk as the scraper reads them, never as one text.
 */
export function backupJobMetrics(options: BackupJobMetricsOptions): MetricsTextSource {
  const clock = options.clock ?? (() => new Date());
  const states = new WeakMap<BackupJob, KeptState>();
  return async () => {
    const objects = options.backupJobs();
    if (!objects) return '';
    const now = clock();
    const all: KeptState[] = [];
    for (const bj of objects) {
      let state = states.get(bj);
      if (!state || now.getTime() >= holdsUntil(state)) {
        state = kept(backupJobState(bj, now, options.config));
        states.set(bj, state);
      }
      all.push(state);
    }
    return gaugeFamilyChunks(
      FAMILIES.map((f) => ({ name: f.name, help: f.help, samples: samplesOf(f, all) })),
    );
  };
}
