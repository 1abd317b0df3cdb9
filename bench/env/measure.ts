import { Redis } from 'ioredis';
import { cpuSeconds } from '../lib/proc.js';
import {
  addBuckets,
  bucketsOf,
  diffBuckets,
  scrape,
  sumOf,
  type Buckets,
  type Sample,
} from '../lib/prom.js';
import { parseCommandStats } from '../lib/redis-stats.js';
import type { EmulatorHandle } from './emulator.js';
import type { RedisDeployment } from '#testing';
import type { SystemUnderTest } from './system.js';

/** Everything cumulative the bench reads at one moment, so two of them give a window. */
export interface Snapshot {
  readonly at: number;
  /** Samples per operator process name. */
  readonly metrics: ReadonlyMap<string, readonly Sample[]>;
  /** Cumulative CPU seconds per process name (operator processes, emulator, redis). */
  readonly cpu: Readonly<Record<string, number>>;
  /** Emulator requests: `verb group/resource[/sub] user` → count. */
  readonly requests: Readonly<Record<string, number>>;
  readonly redisCommands: Readonly<Record<string, number>>;
}

/** CPU and commands of one server. */
async function serverInfo(
  port: number,
): Promise<{ cpu: number; commands: Record<string, number> }> {
  const redis = new Redis({ port, host: '127.0.0.1', lazyConnect: true, maxRetriesPerRequest: 1 });
  try {
    await redis.connect();
    const cpu = await redis.info('cpu');
    const num = (f: string) => Number(new RegExp(`^${f}:([\\d.]+)`, 'm').exec(cpu)?.[1] ?? 0);
    return {
      cpu: num('used_cpu_user') + num('used_cpu_sys'),
      commands: parseCommandStats(await redis.info('commandstats')),
    };
  } finally {
    redis.disconnect();
  }
}

/** Calls per command since the system's Redis started, over all its servers. */
export async function redisCommands(sys: SystemUnderTest): Promise<Record<string, number>> {
  return sys.redis ? (await redisInfo(sys.redis)).commands : {};
}

/**
 * CPU of every data server (a Sentinel's replica replays each write: its CPU is part of the
 * cost); commands of the primaries only, as a replica's count repeats its primary's writes (the
 * bench's Clusters have no replicas: every server counts).
 */
async function redisInfo(
  redis: RedisDeployment,
): Promise<{ cpu: number; commands: Record<string, number> }> {
  const servers =
    redis.cluster?.servers ?? redis.sentinel?.servers ?? (redis.server ? [redis.server] : []);
  const primaryPort = redis.sentinel ? await redis.sentinel.primaryPort() : undefined;
  const infos = await Promise.all(servers.map((s) => serverInfo(s.port)));
  const commands: Record<string, number> = {};
  infos.forEach((info, i) => {
    if (primaryPort !== undefined && servers[i]?.port !== primaryPort) return;
    for (const [cmd, n] of Object.entries(info.commands)) commands[cmd] = (commands[cmd] ?? 0) + n;
  });
  return { cpu: infos.reduce((total, i) => total + i.cpu, 0), commands };
}

/** Cumulative CPU seconds of every process of the system, the emulator's and Redis'. */
export async function cpuNow(
  sys: SystemUnderTest,
  emu: EmulatorHandle,
): Promise<{ cpu: Record<string, number>; redisCommands: Record<string, number> }> {
  const cpu: Record<string, number> = {};
  for (const p of sys.processes) {
    try {
      cpu[p.name] = cpuSeconds(p.proc.child.pid ?? 0);
    } catch {
      cpu[p.name] = Number.NaN;
    }
  }
  cpu.emulator = cpuSeconds(emu.pid);
  let redisCommands: Record<string, number> = {};
  if (sys.redis) {
    const info = await redisInfo(sys.redis);
    cpu.redis = info.cpu;
    redisCommands = info.commands;
  }
  return { cpu, redisCommands };
}

export async function snapshot(sys: SystemUnderTest, emu: EmulatorHandle): Promise<Snapshot> {
  const metrics = new Map<string, readonly Sample[]>();
  await Promise.all(
    sys.processes.map(async (p) => {
      metrics.set(p.name, await scrape(p.metricsUrl).catch(() => []));
    }),
  );
  const { cpu, redisCommands } = await cpuNow(sys, emu);
  return {
    at: Date.now(),
    metrics,
    cpu,
    requests: await emu.call('requests', undefined),
    redisCommands,
  };
}

/**
 * What is cumulative before a system starts: the emulator's CPU and requests. Paired with a
 * snapshot taken later, the window holds the system's whole life, start-up included.
 */
export async function markBeforeStart(emu: EmulatorHandle): Promise<Snapshot> {
  return {
    at: Date.now(),
    metrics: new Map(),
    cpu: { emulator: cpuSeconds(emu.pid) },
    requests: await emu.call('requests', undefined),
    redisCommands: {},
  };
}

export function total(s: Snapshot, metric: string, labels = {}): number {
  let n = 0;
  for (const samples of s.metrics.values()) n += sumOf(samples, metric, labels);
  return n;
}

function buckets(s: Snapshot, metric: string): Buckets {
  return addBuckets([...s.metrics.values()].map((samples) => bucketsOf(samples, metric)));
}

/** What happened between two snapshots. */
export interface Window {
  readonly seconds: number;
  readonly reconciles: number;
  /** CPU seconds per process in the window, plus `operator` (all operator processes). */
  readonly cpu: Record<string, number>;
  /** Requests for API resources by verb (get, list, watch, create, update, patch, delete). */
  readonly requestsByVerb: Record<string, number>;
  /** Requests by `verb resource`. */
  readonly requests: Record<string, number>;
  readonly redisCommands: Record<string, number>;
  readonly queueWait: Buckets;
  /** Create/update/patch/delete requests the reconciles made (see reconcileWrites). */
  readonly reconcileWrites: number;
  /**
   * Gets and lists of API resources the server answered, Leases aside. Measured at the server
   * rather than by the workers' own count because a worker's readiness check (run by every
   * /readyz and every /metrics scrape) GETs /version, which is not a read of the world; a relist
   * by a watcher or an informer counts too, so in a window after start-up it is what reconciles
   * and caches read, for either system.
   */
  readonly reconcileReads: number;
  /** Mean seconds per reconcile (controller_runtime_reconcile_time_seconds sum ÷ count). */
  readonly reconcileMean: number;
  /** Mean seconds a key waited in the queue (workqueue_queue_duration_seconds sum ÷ count). */
  readonly queueWaitMean: number;
}

const WRITE_VERBS = new Set(['create', 'update', 'patch', 'delete', 'deletecollection']);

const WRITE_METHODS = ['POST', 'PUT', 'PATCH', 'DELETE'];

const READ_VERBS = new Set(['get', 'list']);

const LEASES = 'coordination.k8s.io/leases';

/**
 * Writes the reconciles made. Worker processes count their own requests
 * (rest_client_requests_total by method), which leaves out what the watcher writes whatever
 * happens (Lease renewals, its leader election Event); a system without workers is counted at
 * the emulator, Leases aside.
 */
function workerRequests(before: Snapshot, after: Snapshot, methods: readonly string[]): number {
  let n = 0;
  for (const name of workerNames(after)) {
    for (const method of methods) {
      const count = (s: Snapshot) =>
        sumOf(s.metrics.get(name) ?? [], 'rest_client_requests_total', { method });
      n += count(after) - count(before);
    }
  }
  return n;
}

function resourceReads(requests: Record<string, number>): number {
  return Object.entries(requests)
    .filter(([id]) => {
      const [verb = '', resource = ''] = id.split(' ');
      return READ_VERBS.has(verb) && !resource.startsWith('/') && resource !== LEASES;
    })
    .reduce((a, [, n]) => a + n, 0);
}

function workerNames(s: Snapshot): string[] {
  return [...s.metrics.keys()].filter((name) => name.startsWith('worker-'));
}

/** Writes the API server served, by `verb resource` counts, leaving out the given resources. */
export function serverWrites(
  requests: Record<string, number>,
  except: readonly string[] = [LEASES],
): number {
  return Object.entries(requests)
    .filter(([id]) => {
      const [verb = '', resource = ''] = id.split(' ');
      return WRITE_VERBS.has(verb) && !except.includes(resource);
    })
    .reduce((a, [, n]) => a + n, 0);
}

function reconcileWrites(
  before: Snapshot,
  after: Snapshot,
  requests: Record<string, number>,
): number {
  if (workerNames(after).length > 0) return workerRequests(before, after, WRITE_METHODS);
  return serverWrites(requests);
}

export function writes(w: Window): number {
  return w.reconcileWrites;
}

function delta(
  after: Readonly<Record<string, number>>,
  before: Readonly<Record<string, number>>,
): Record<string, number> {
  const out: Record<string, number> = {};
  for (const [k, v] of Object.entries(after)) {
    const d = v - (before[k] ?? 0);
    if (d !== 0) out[k] = d;
  }
  return out;
}

function meanOf(before: Snapshot, after: Snapshot, histogram: string): number {
  const sum = total(after, `${histogram}_sum`) - total(before, `${histogram}_sum`);
  const count = total(after, `${histogram}_count`) - total(before, `${histogram}_count`);
  return count > 0 ? sum / count : Number.NaN;
}

export function windowOf(before: Snapshot, after: Snapshot): Window {
  const requests: Record<string, number> = {};
  const requestsByVerb: Record<string, number> = {};
  for (const [id, n] of Object.entries(delta(after.requests, before.requests))) {
    const [verb = '', resource = ''] = id.split(' ');
    requests[`${verb} ${resource}`] = (requests[`${verb} ${resource}`] ?? 0) + n;
    // Non-resource paths are the readiness checks' GET /version, run by every scrape the bench
    // itself makes: not the system's work.
    if (!resource.startsWith('/')) requestsByVerb[verb] = (requestsByVerb[verb] ?? 0) + n;
  }
  const cpu = delta(after.cpu, before.cpu);
  cpu.operator = Object.entries(cpu)
    .filter(([name]) => name !== 'emulator' && name !== 'redis')
    .reduce((a, [, v]) => a + v, 0);
  const redisCommands = delta(after.redisCommands, before.redisCommands);
  for (const k of Object.keys(redisCommands)) {
    if (k === 'info' || k.startsWith('config')) delete redisCommands[k];
  }
  return {
    seconds: (after.at - before.at) / 1000,
    reconciles:
      total(after, 'controller_runtime_reconcile_total') -
      total(before, 'controller_runtime_reconcile_total'),
    cpu,
    requestsByVerb,
    requests,
    redisCommands,
    reconcileWrites: reconcileWrites(before, after, requests),
    reconcileReads: resourceReads(requests),
    reconcileMean: meanOf(before, after, 'controller_runtime_reconcile_time_seconds'),
    queueWaitMean: meanOf(before, after, 'workqueue_queue_duration_seconds'),
    queueWait: diffBuckets(
      buckets(after, 'workqueue_queue_duration_seconds'),
      buckets(before, 'workqueue_queue_duration_seconds'),
    ),
  };
}

/**
 * Waits until the system has nothing queued or running and no reconcile finished for `quietMs`:
 * the end of a pass over the keys.
 */
/**
 * The processes whose metrics tell progress: the workers (every one reads the queue depth from
 * Redis and counts its reconciles), or the one process of a system without workers. Polls leave
 * out the watcher, whose exposition carries a series set per BackupJob: scraping it four times a
 * second would spend the cores the run is measuring.
 */
function progressProcesses(sys: SystemUnderTest): SystemUnderTest['processes'] {
  const workers = sys.processes.filter((p) => p.role === 'worker');
  return workers.length > 0 ? workers : sys.processes;
}

/** Reconciles the system has made so far, all processes together. */
export async function reconcileCount(sys: SystemUnderTest): Promise<number> {
  let reconciles = 0;
  for (const p of progressProcesses(sys)) {
    const samples = await scrape(p.metricsUrl).catch(() => []);
    reconciles += sumOf(samples, 'controller_runtime_reconcile_total');
  }
  return reconciles;
}

/** Polls until the system has made `n` reconciles in all; false when `timeoutMs` passed first. */
export async function waitForReconciles(
  sys: SystemUnderTest,
  n: number,
  timeoutMs: number,
  pollMs = 250,
): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if ((await reconcileCount(sys)) >= n) return true;
    await new Promise((r) => setTimeout(r, pollMs));
  }
  return false;
}

export async function waitQuiet(
  sys: SystemUnderTest,
  timeoutMs: number,
  quietMs = 1500,
): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  let last = -1;
  let since = Date.now();
  while (Date.now() < deadline) {
    let reconciles = 0;
    let busy = 0;
    for (const p of progressProcesses(sys)) {
      const samples = await scrape(p.metricsUrl).catch(() => []);
      reconciles += sumOf(samples, 'controller_runtime_reconcile_total');
      busy +=
        sumOf(samples, 'workqueue_depth') + sumOf(samples, 'controller_runtime_active_workers');
    }
    if (reconciles !== last || busy > 0) {
      last = reconciles;
      since = Date.now();
    } else if (Date.now() - since >= quietMs) return true;
    await new Promise((r) => setTimeout(r, 250));
  }
  return false;
}
