import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import type { KubeConfig, V1CronJob, V1Job } from '@kubernetes/client-node';
import type { BackupJob } from '#api';
import {
  configFingerprint,
  worldFingerprint,
  type ConvergedMarks,
  type SnapshotReader,
} from '#snapshot';
import { Logger } from '#observability';
import { TerminalError, type HandlerResult } from '#queue';
import {
  cronJobName,
  jobSelector,
  onFailure,
  reconcile,
  referencedObjects,
  type Grant,
  type ReconcileFailure,
  type ReconcilerConfig,
  type Result,
} from '#reconciler';
import { classify, missingPermission, type ApiFailure } from './api-error.js';
import { createKubeClients, type KubeClients } from './clients.js';
import { EventRecorder } from './event-recorder.js';
import { ActionExecutor, StepError } from './executor.js';
import { GrantReviewer } from './grant-review.js';

export const REPORTING_CONTROLLER = 'backup.ops.example.com/backupjob-operator';
/** The shortest RequeueAfter; 1 ms rather than 0 so it is never "no requeue". */
const IMMEDIATE_REQUEUE_MS = 1;

export interface ReconcileKeyOptions {
  readonly kubeConfig: KubeConfig;
  /**
   * Where the watcher keeps each BackupJob's snapshot: runs read the world there and make no
   * API read. Without it every run reads the BackupJob and its children from the API server.
   */
  readonly snapshots?: SnapshotReader;
  /**
   * Where a run from a snapshot that wrote nothing records so, for the watcher's resync to skip
   * the key until its RequeueAfter is due or something changes.
   */
  readonly converged?: Pick<ConvergedMarks, 'record'>;
  readonly config: ReconcilerConfig;
  readonly logger?: Logger;
  /** The real clock unless a test needs another. */
  readonly clock?: () => Date;
  /** events.k8s.io reportingInstance; the host (pod) name by default. */
  readonly reportingInstance?: string;
  readonly requestTimeoutMs?: number;
  /** How many Event series are remembered for aggregation. */
  readonly eventSeriesCacheSize?: number;
  /** How long an answer about a grant (a Secret or claim opted in) is reused; 30 s by default. */
  readonly grantCacheTtlMs?: number;
}

/** What the queue hands a run (its RunContext fits). */
export interface RunOptions {
  /** Aborts the run's API requests and stops its writes: the key's lease was lost, or shutdown. */
  readonly signal?: AbortSignal;
  /** Consecutive failures of the key before this run (client-go NumRequeues); 0 when unknown. */
  readonly failures?: number;
}

/**
 * The queue handler for one `namespace/name` key: resolves to nothing (done) or
 * `{ requeueAfter }`; throws to back off; throws TerminalError for no requeue (invalid spec);
 * rethrows the signal's reason when the queue aborted the run.
 */
export type ReconcileKey = (key: string, run?: RunOptions) => Promise<HandlerResult>;

interface World {
  readonly backupJob: BackupJob | undefined;
  readonly cronJob: V1CronJob | undefined;
  readonly jobs: readonly V1Job[];
  readonly grants?: readonly Grant[];
  /** The snapshot's worldFingerprint, when the world was read from one. */
  readonly fingerprint?: string;
}

type ReadWorld = (namespace: string, name: string) => Promise<World>;

/** Builds the BackupJob controller's per-key reconcile: read, decide (pure), write. */
export function createReconcileKey(options: ReconcileKeyOptions): ReconcileKey {
  const clients = createKubeClients(options.kubeConfig, options.requestTimeoutMs);
  const clock = options.clock ?? (() => new Date());
  const baseLog = (options.logger ?? new Logger()).child({ controller: 'backupjob' });
  const recorder = new EventRecorder(clients, {
    controller: REPORTING_CONTROLLER,
    instance: (options.reportingInstance ?? hostname()).slice(0, 128),
    clock,
    maxSeries: options.eventSeriesCacheSize,
  });

  const grants = new GrantReviewer({ ttlMs: options.grantCacheTtlMs });
  const snapshots = options.snapshots;
  const config = configFingerprint(options.config);
  return async (key: string, run: RunOptions = {}): Promise<HandlerResult> => {
    const { namespace, name } = parseKey(key);
    // controller-runtime's reconcileID: ties together every line of one run of one key.
    const log = baseLog.child({ key, namespace, name, reconcileID: randomUUID() });
    log.debug('reconcile started');
    const scoped = clients.withSignal(run.signal);
    const executor = new ActionExecutor(scoped, recorder, log);
    const fromApi: ReadWorld = (ns, n) => readWorld(scoped, ns, n);
    const attempt = async (read: ReadWorld): Promise<Result> => {
      const world = await withGrants(scoped, grants, namespace, await readStep(read));
      const now = clock();
      const output = reconcile({ ...world, now, config: options.config });
      const writes = await executor.run(output.actions, world.backupJob, run.signal);
      log.debug('reconciled', { writes, result: output.result.kind });
      const { result } = output;
      // Grants are answers from outside the snapshot, so only a world without any is proven.
      if (
        options.converged &&
        world.fingerprint !== undefined &&
        world.grants === undefined &&
        output.actions.length === 0 &&
        result.kind === 'requeueAfter'
      ) {
        const mark = {
          fingerprint: world.fingerprint,
          config,
          until: now.getTime() + result.delayMs,
        };
        // Off the run's path: a mark not recorded only costs the key a run at the next resync.
        options.converged.record(key, mark).catch((err: unknown) => {
          log.debug('could not record the key as converged', { err });
        });
      }
      return result;
    };
    const readStep = async (read: ReadWorld): Promise<World> => {
      try {
        return await read(namespace, name);
      } catch (err) {
        throw new StepError('read', err, undefined);
      }
    };
    const ctx = { executor, log, clock, failures: run.failures ?? 0 };
    let result: Result;
    try {
      result = await attempt(snapshots ? (ns, n) => readSnapshot(snapshots, ns, n) : fromApi);
    } catch (err) {
      try {
        // Creating a child the snapshot lacks met one that exists: one not the operator's (its
        // watches see only the operator's children) or one made since. One run on what the API
        // server says settles which.
        if (!snapshots || !isAlreadyExists(err)) throw err;
        log.debug('a child the snapshot lacks exists; reading from the API server once');
        result = await attempt(fromApi);
      } catch (err) {
        // The queue knows why it aborted (lease lost, shutdown); hand its reason back unchanged.
        if (run.signal?.aborted) {
          log.warn('reconcile aborted', { reason: String(run.signal.reason) });
          throw run.signal.reason;
        }
        return handleFailure(err, ctx);
      }
    }
    return toHandlerResult(result);
  };
}

/** The snapshot as the world; no snapshot means the BackupJob is gone. */
async function readSnapshot(
  snapshots: SnapshotReader,
  namespace: string,
  name: string,
): Promise<World> {
  const snapshot = await snapshots.read(`${namespace}/${name}`);
  if (!snapshot) return { backupJob: undefined, cronJob: undefined, jobs: [] };
  return {
    backupJob: snapshot.backupJob as unknown as BackupJob,
    cronJob: snapshot.cronJob as V1CronJob | undefined,
    jobs: snapshot.jobs as V1Job[],
    fingerprint: worldFingerprint(snapshot),
  };
}

/**
 * Adds whether the namespace opted in each object the BackupJob names (its Secret, its claim);
 * neither is ever read.
 */
async function withGrants(
  clients: KubeClients,
  reviewer: GrantReviewer,
  namespace: string,
  world: World,
): Promise<World> {
  const refs = referencedObjects(world.backupJob?.spec);
  if (refs.length === 0) return world;
  try {
    const granted = await Promise.all(refs.map((ref) => reviewer.review(clients, namespace, ref)));
    return { ...world, grants: granted };
  } catch (err) {
    throw new StepError(
      'reviewGrants',
      err,
      world.backupJob,
      refs.map((ref) => `${ref.resource}/${ref.name}`).join(', '),
    );
  }
}

function isAlreadyExists(err: unknown): boolean {
  const failure = classify(err instanceof StepError ? err.cause : err);
  return failure.kind === 'conflict' && failure.reason === 'AlreadyExists';
}

export function parseKey(key: string): { namespace: string; name: string } {
  const [namespace, name, ...rest] = key.split('/');
  if (!namespace || !name || rest.length > 0) {
    throw new TerminalError(`key "${key}" is not namespace/name`);
  }
  return { namespace, name };
}

/**
 * Reads the BackupJob and its children in one round trip rather than two: the API round trip, not
 * CPU, bounds a reconcile. The children's reads are dropped when the BackupJob is gone.
 */
async function readWorld(clients: KubeClients, namespace: string, name: string): Promise<World> {
  const children = Promise.all([
    clients.getCronJob({ namespace, name: cronJobName(name) }),
    clients.listJobs(namespace, jobSelector(name)),
  ]);
  // Settled either way below; this only keeps a failure of a dropped read from going unhandled.
  children.catch(() => undefined);
  const backupJob = await clients.getBackupJob({ namespace, name });
  if (!backupJob) return { backupJob, cronJob: undefined, jobs: [] };
  const [cronJob, jobs] = await children;
  return { backupJob, cronJob, jobs };
}

/** controller-runtime's mapping: RequeueAfter → AddAfter, error → backoff, terminal → none. */
function toHandlerResult(result: Result): HandlerResult {
  switch (result.kind) {
    case 'done':
      return undefined;
    case 'requeueAfter':
      return { requeueAfter: Math.max(IMMEDIATE_REQUEUE_MS, result.delayMs) };
    case 'error':
      throw result.error;
    case 'terminal':
      throw new TerminalError(result.reason);
  }
}

interface FailureContext {
  readonly executor: ActionExecutor;
  readonly log: Logger;
  readonly clock: () => Date;
  readonly failures: number;
}

/** A failed API call as an error that names the call's answer, for the queue's error metrics. */
class ReconcileError extends Error {
  constructor(readonly failure: ApiFailure) {
    super(`${failure.reason}: ${failure.message}`);
    this.name = 'ReconcileError';
  }
}

/**
 * The I/O half of a failed run: sorts the error, asks the reconciler (onFailure) whether and how
 * to tell the user and how to retry, writes the report best effort, logs, and hands the queue
 * the retry: a thrown error backs off, a RequeueAfter honours the server's Retry-After.
 */
async function handleFailure(err: unknown, ctx: FailureContext): Promise<HandlerResult> {
  const step = err instanceof StepError ? err : new StepError('read', err, undefined);
  const api = classify(step.cause);
  const failure: ReconcileFailure = {
    kind: api.kind,
    step: step.step,
    object: step.object,
    code: api.code,
    apiReason: api.reason,
    message: api.message,
    retryAfterMs: api.retryAfterMs,
    permission: api.kind === 'forbidden' ? missingPermission(api.message) : undefined,
  };
  const decision = onFailure({
    backupJob: step.backupJob,
    failure,
    failures: ctx.failures,
    now: ctx.clock(),
  });
  if (step.backupJob && decision.actions.length > 0) {
    await ctx.executor.report(decision.actions, step.backupJob);
  }
  // Last: the line ends the run in the log, and the report's writes are part of the run.
  logFailure(ctx, failure, decision.reported);
  const { result } = decision;
  if (result.kind === 'requeueAfter') {
    return { requeueAfter: Math.max(IMMEDIATE_REQUEUE_MS, result.delayMs) };
  }
  throw new ReconcileError(api);
}

function logFailure(ctx: FailureContext, failure: ReconcileFailure, reported: boolean): void {
  const fields = {
    step: failure.step,
    code: failure.code,
    reason: failure.apiReason,
    error: failure.message,
    failures: ctx.failures + 1,
    reported,
  };
  switch (failure.kind) {
    case 'forbidden':
      ctx.log.error('forbidden: the operator lacks a permission', {
        ...failure.permission,
        ...fields,
      });
      return;
    case 'invalid':
      ctx.log.error('API server rejected a request', fields);
      return;
    case 'transient':
      if (failure.retryAfterMs !== undefined) {
        ctx.log.warn('API server asked to retry later', {
          ...fields,
          retryAfterMs: failure.retryAfterMs,
        });
        return;
      }
      ctx.log.warn('API call failed; backing off', fields);
      return;
    case 'conflict':
    case 'notFound':
      // A stale read is how optimistic concurrency works; only a persistent one is news.
      if (reported) ctx.log.warn('API call failed; backing off', fields);
      else ctx.log.debug('API call failed; backing off', fields);
      return;
  }
}
