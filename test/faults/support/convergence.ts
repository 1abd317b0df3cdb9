import assert from 'node:assert/strict';
import {
  condition,
  eventually,
  jsonLines,
  lastStarts,
  type ManagedProcess,
  type OperatorSystem,
  type OperatorSystemOptions,
  overlappingRuns,
  type ReconcileRun,
  reconcileRuns,
} from '#testing';
import { getBackupJob, getCronJob } from '../../e2e/support.js';
import { NAMESPACE, type Fleet } from './fleet.js';
import { startFaultSystem, type FaultSystem } from './system.js';

interface CronJobSpec {
  schedule?: string;
  suspend?: boolean;
  timeZone?: string;
}

interface OwnerReference {
  kind?: string;
  uid?: string;
  controller?: boolean;
}

/** What is still wrong with one BackupJob, or undefined when it has converged. */
function problemOf(sys: OperatorSystem, name: string): string | undefined {
  const bj = getBackupJob(sys, NAMESPACE, name);
  if (!bj) return 'BackupJob missing';
  const cj = getCronJob(sys, NAMESPACE, name);
  if (!cj) return 'no CronJob';
  const spec = bj.spec as CronJobSpec;
  const cjSpec = (cj.spec ?? {}) as CronJobSpec;
  if (cjSpec.schedule !== spec.schedule)
    return `CronJob schedule ${cjSpec.schedule} ≠ ${spec.schedule}`;
  if ((cjSpec.suspend ?? false) !== (spec.suspend ?? false)) return 'CronJob suspend ≠ spec';
  if (cjSpec.timeZone !== spec.timeZone)
    return `CronJob timeZone ${cjSpec.timeZone} ≠ ${spec.timeZone}`;
  const owners = (cj.metadata.ownerReferences ?? []) as OwnerReference[];
  if (
    !owners.some(
      (o) => o.controller === true && o.kind === 'BackupJob' && o.uid === bj.metadata.uid,
    )
  )
    return 'CronJob lacks the controller ownerReference';
  if (bj.status?.observedGeneration !== bj.metadata.generation)
    return `observedGeneration ${bj.status?.observedGeneration} ≠ generation ${bj.metadata.generation}`;
  if (condition(bj, 'Ready')?.status !== 'True') return 'Ready is not True';
  return undefined;
}

/**
 * What keeps the fleet from its end state: a BackupJob not converged, or one whose last spec
 * change no reconcile has started after yet (the change's event must reach a worker even when an
 * earlier run already read the new spec).
 */
function convergenceProblems(
  sys: OperatorSystem,
  fleet: Fleet,
  starts?: ReadonlyMap<string, number>,
): string[] {
  return fleet.names.flatMap((name) => {
    const problem = problemOf(sys, name) ?? (starts && unobserved(fleet, starts, name));
    return problem ? [`${name}: ${problem}`] : [];
  });
}

function unobserved(
  fleet: Fleet,
  starts: ReadonlyMap<string, number>,
  name: string,
): string | undefined {
  const started = starts.get(`${NAMESPACE}/${name}`) ?? 0;
  if (started > fleet.lastChange(name)) return undefined;
  const iso = (ms: number) => new Date(ms).toISOString();
  return `changed ${iso(fleet.lastChange(name))}, no reconcile started since (last ${iso(started)})`;
}

/** Polls until every BackupJob of the fleet has converged; fails listing what has not. */
export async function waitConverged(
  sys: OperatorSystem,
  fleet: Fleet,
  timeoutMs = 90_000,
  starts?: () => ReadonlyMap<string, number>,
): Promise<void> {
  const problems = () => convergenceProblems(sys, fleet, starts?.());
  try {
    await eventually(
      `${fleet.names.length} BackupJobs to converge`,
      () => problems().length === 0,
      timeoutMs,
      250,
    );
  } catch (err) {
    const lastStart = starts?.();
    const report = [
      ...problems()
        .slice(0, 20)
        .map((problem) => `${problem} (${history(sys, fleet, problem, lastStart)})`),
      ...processReport(sys),
    ];
    throw new Error(`${(err as Error).message}:\n  ${report.join('\n  ')}`, { cause: err });
  }
}

/**
 * Where a change stopped, for a failure's message: the object's versions tell whether the API
 * server has it, and the last run's start whether any worker took the key after the change.
 */
function history(
  sys: OperatorSystem,
  fleet: Fleet,
  problem: string,
  starts: ReadonlyMap<string, number> | undefined,
): string {
  const name = problem.slice(0, problem.indexOf(':'));
  const bj = getBackupJob(sys, NAMESPACE, name);
  const iso = (ms: number | undefined) => (ms ? new Date(ms).toISOString() : 'never');
  return [
    `resourceVersion ${bj?.metadata.resourceVersion}`,
    `generation ${bj?.metadata.generation}`,
    `observedGeneration ${bj?.status?.observedGeneration}`,
    `last change ${iso(fleet.lastChange(name))}`,
    `last reconcile started ${starts ? iso(starts.get(`${NAMESPACE}/${name}`)) : 'not tracked'}`,
  ].join(', ');
}

function describeRun(run: ReconcileRun): string {
  const end = run.ended ? new Date(run.end).toISOString() : 'no end line';
  return `${run.worker} ${run.reconcileID} (${new Date(run.start).toISOString()} … ${end})`;
}

/** What each process last said above debug level, and how it ended: for a failure's message. */
function processReport(sys: OperatorSystem): string[] {
  return [...sys.watchers, ...sys.workers].flatMap((p) => [
    `${p.name} ${p.running ? 'running' : 'exited'}:`,
    ...jsonLines(p)
      .filter((l) => l.level !== 'debug')
      .slice(-8)
      .map((l) => `  ${l.time} ${String(l.level)} ${l.msg}`),
  ]);
}

export interface EndStateOptions {
  /** When each SIGKILLed worker died: its run in flight then is taken to last until that moment. */
  readonly killedAt?: ReadonlyMap<ManagedProcess, number>;
  readonly timeoutMs?: number;
}

/**
 * The end state every fault test demands: every BackupJob converged, no two runs of one key at
 * once on any workers, and no lost update — the last spec change of each BackupJob was followed by
 * a reconcile that started after it (on top of observedGeneration == generation).
 */
export async function assertConvergedEndState(
  sys: OperatorSystem,
  fleet: Fleet,
  options: EndStateOptions = {},
): Promise<ReconcileRun[]> {
  const runs = () => reconcileRuns(sys.workers, options.killedAt);
  await waitConverged(sys, fleet, options.timeoutMs, () => lastStarts(runs()));
  assert.deepEqual(
    overlappingRuns(runs()).map(([a, b]) => `${a.key}: ${describeRun(a)} and ${describeRun(b)}`),
    [],
    'two workers reconciled one key at the same time',
  );
  return runs();
}

/** The starting point of most fault tests: the system up with `count` BackupJobs, all converged. */
export async function startConvergedFaultSystem(
  options: OperatorSystemOptions = {},
  count = 20,
): Promise<FaultSystem> {
  const fs = await startFaultSystem(options);
  fs.fleet.create(count);
  await waitConverged(fs.sys, fs.fleet);
  return fs;
}
