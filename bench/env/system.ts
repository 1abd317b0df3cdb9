import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { MemoryCgroup } from '../lib/cgroup.js';
import { scrape, sumOf } from '../lib/prom.js';
import {
  eventually,
  freePort,
  startProcess,
  startRedisDeployment,
  type ManagedProcess,
  type RedisDeployment,
  type RedisMode,
} from '#testing';

const node = process.execPath;
export const dist = (path: string) => fileURLToPath(new URL(`../../${path}`, import.meta.url));

export type Role = 'watcher' | 'worker' | 'baseline';

export interface OperatorProcess {
  readonly role: Role;
  readonly name: string;
  readonly proc: ManagedProcess;
  readonly metricsUrl: string;
  readonly healthUrl?: string;
  /** Date.now() when it was spawned. */
  readonly spawnedAt: number;
  /** Its inspector's port, when started with `inspect`. */
  readonly inspectPort?: number;
  /** The memory cgroup it runs in, when started with a memory limit. */
  readonly memoryCgroup?: MemoryCgroup;
}

/** A running system under test: the real operator or the single-process baseline. */
export interface SystemUnderTest {
  readonly label: string;
  readonly processes: OperatorProcess[];
  readonly redis?: RedisDeployment;
  stop(): Promise<void>;
}

export interface CommonOptions {
  readonly kubeconfigPath: string;
  /** Write a V8 CPU profile of every process into this directory, named after the process. */
  readonly profileDir?: string;
  /** Open each process's inspector on a free local port (see `inspectPort`). */
  readonly inspect?: boolean;
  readonly echo?: boolean;
}

async function ok(url: string): Promise<boolean> {
  const res = await fetch(url);
  await res.arrayBuffer();
  return res.ok;
}

/**
 * Starts `node [args…] entry` with the operator's environment. `entry` is a file, or the node
 * arguments that stand for one (`['--input-type=module', '-e', …]`).
 */
export async function spawnNode(
  role: Role,
  name: string,
  entry: string | readonly string[],
  env: Record<string, string>,
  opts: CommonOptions & { health?: boolean; memoryCgroup?: MemoryCgroup },
): Promise<OperatorProcess> {
  const metricsPort = await freePort();
  const healthPort = await freePort();
  const inspectPort = opts.inspect ? await freePort() : undefined;
  const spawnedAt = Date.now();
  const args = [
    ...profileFlags(opts.profileDir, name),
    ...(inspectPort ? [`--inspect=127.0.0.1:${inspectPort}`] : []),
    ...(typeof entry === 'string' ? [entry] : entry),
  ];
  const cgroup = opts.memoryCgroup;
  const proc = startProcess({
    name,
    // Inside its cgroup before Node starts, as in a container: Node reads the limit at start.
    ...(cgroup
      ? {
          command: 'sh',
          args: ['-c', 'echo $$ > "$0" && exec "$@"', cgroup.procsFile, node, ...args],
        }
      : { command: node, args }),
    env: {
      KUBECONFIG: opts.kubeconfigPath,
      METRICS_PORT: String(metricsPort),
      METRICS_BIND_ADDRESS: '127.0.0.1',
      HEALTH_PORT: String(healthPort),
      HEALTH_BIND_ADDRESS: '127.0.0.1',
      POD_NAME: name,
      LOG_LEVEL: 'warn',
      ...env,
    },
    echo: opts.echo,
  });
  return {
    role,
    name,
    proc,
    metricsUrl: `http://127.0.0.1:${metricsPort}/metrics`,
    healthUrl: opts.health ? `http://127.0.0.1:${healthPort}` : undefined,
    spawnedAt,
    inspectPort,
    memoryCgroup: cgroup,
  };
}

export function profileFlags(dir: string | undefined, name: string): string[] {
  return dir ? ['--cpu-prof', `--cpu-prof-dir=${dir}`, `--cpu-prof-name=${name}.cpuprofile`] : [];
}

/** Systems still running, so an interrupted bench can stop them instead of leaving orphans. */
const running = new Set<SystemUnderTest>();

function tracked(sys: SystemUnderTest): SystemUnderTest {
  const t: SystemUnderTest = {
    ...sys,
    stop: async () => {
      running.delete(t);
      await sys.stop();
    },
  };
  running.add(t);
  return t;
}

/** Processes a scenario spawned itself, stopped with the rest when the bench is interrupted. */
export function trackedSystem(
  label: string,
  processes: OperatorProcess[],
  redis?: RedisDeployment,
): SystemUnderTest {
  return tracked({
    label,
    processes,
    redis,
    async stop() {
      await stopAll(processes);
      await redis?.stop();
    },
  });
}

export async function stopAllSystems(): Promise<void> {
  await Promise.all([...running].map((s) => s.stop()));
}

async function stopAll(processes: readonly OperatorProcess[]): Promise<void> {
  await Promise.all(processes.map((p) => p.proc.stop('SIGTERM', 10_000)));
}

export interface OperatorOptions extends CommonOptions {
  readonly workers: number;
  readonly concurrency: number;
  readonly shards: number;
  /** More environment for the worker processes. */
  readonly workerEnv?: Record<string, string>;
  /** More environment for the watcher processes. */
  readonly watcherEnv?: Record<string, string>;
  /**
   * One redis-server (default), a Redis Cluster of 3 primaries without replicas, or a primary
   * with one replica and one Sentinel.
   */
  readonly redis?: RedisMode;
  /** The output folder of another build (`OUT_DIR=<dir> npm run build`) to run instead of this one's. */
  readonly build?: string;
  /** Each process in a memory cgroup of its own with this limit, in bytes, as in a pod. */
  readonly memoryLimits?: { readonly watcher: number; readonly worker: number };
  /** Node options each app starts with, before its entry point (the chart's `nodeArgs`). */
  readonly nodeArgs?: { readonly watcher: readonly string[]; readonly worker: readonly string[] };
}

/** The product: Redis, one leader-elected watcher and N worker processes, as real processes. */
export async function startOperator(o: OperatorOptions): Promise<SystemUnderTest> {
  const mode = o.redis ?? 'standalone';
  const redis = await startRedisDeployment(mode, { replicas: mode === 'sentinel' ? 1 : 0 });
  const common = {
    ...redis.env,
    QUEUE_SHARDS: String(o.shards),
    LEADER_ELECTION_NAMESPACE: 'default',
    POD_NAMESPACE: 'default',
  };
  const entry = (app: 'watcher' | 'worker') => [
    ...(o.nodeArgs?.[app] ?? []),
    o.build ? join(o.build, 'apps', app, 'src', 'main.js') : dist(`apps/${app}/src/main.js`),
  ];
  const processes: OperatorProcess[] = [];
  const cgroups: MemoryCgroup[] = [];
  const memoryCgroup = (role: 'watcher' | 'worker', name: string) => {
    if (!o.memoryLimits) return undefined;
    const cgroup = MemoryCgroup.create(`bench-${process.pid}-${name}`, o.memoryLimits[role]);
    cgroups.push(cgroup);
    return cgroup;
  };
  const stop = async () => {
    await stopAll(processes);
    await redis.stop();
    for (const cgroup of cgroups) cgroup.remove();
  };
  const readyz = (p: OperatorProcess) =>
    eventually(`${p.name} ready`, () => ok(`${p.healthUrl}/readyz`), 60_000);
  const startWatcher = async (n: number) => {
    const w = await spawnNode(
      'watcher',
      `watcher-${n}`,
      entry('watcher'),
      { ...common, ...o.watcherEnv },
      { ...o, health: true, memoryCgroup: memoryCgroup('watcher', `watcher-${n}`) },
    );
    processes.unshift(w);
    // A standby is ready too; the watcher is ready to measure once it leads and is synced.
    await eventually(
      `${w.name} leading`,
      async () => sumOf(await scrape(w.metricsUrl), 'leader_election_master_status') >= 1,
      60_000,
    );
    await readyz(w);
  };
  try {
    const workers = await Promise.all(
      Array.from({ length: o.workers }, (_, i) =>
        spawnNode(
          'worker',
          `worker-${i}`,
          entry('worker'),
          { ...common, WORKER_CONCURRENCY: String(o.concurrency), ...o.workerEnv },
          { ...o, health: true, memoryCgroup: memoryCgroup('worker', `worker-${i}`) },
        ),
      ),
    );
    processes.push(...workers);
    await Promise.all(workers.map(readyz));
    let generation = 0;
    await startWatcher(generation++);
    return tracked({
      label: `operator ${o.workers}×${o.concurrency}`,
      processes,
      redis,
      stop,
    });
  } catch (err) {
    await stop();
    throw err;
  }
}

export interface BaselineOptions extends CommonOptions {
  readonly concurrency: number;
  /** More environment for the process. */
  readonly env?: Record<string, string>;
  /** The process in a memory cgroup of its own with this limit, in bytes, as in a pod. */
  readonly memoryLimit?: number;
}

/** The single-process client-node operator with the same reconciler (bench/baseline). */
export async function startBaseline(o: BaselineOptions): Promise<SystemUnderTest> {
  const name = `baseline-c${o.concurrency}`;
  const memoryCgroup =
    o.memoryLimit === undefined
      ? undefined
      : MemoryCgroup.create(`bench-${process.pid}-${name}`, o.memoryLimit);
  const p = await spawnNode(
    'baseline',
    name,
    dist('bench/baseline/main.js'),
    { CONCURRENCY: String(o.concurrency), ...o.env },
    { ...o, memoryCgroup },
  );
  const stop = async () => {
    await stopAll([p]);
    memoryCgroup?.remove();
  };
  try {
    await p.proc.waitForLine(/informers synced/, 120_000);
  } catch (err) {
    await p.proc.stop('SIGKILL');
    const killed = memoryCgroup?.oomKills() ? ' (killed by the kernel at its memory limit)' : '';
    memoryCgroup?.remove();
    throw new Error(`${String(err)}${killed}\n${p.proc.lines.slice(-20).join('\n')}`, {
      cause: err,
    });
  }
  return tracked({ label: `baseline c=${o.concurrency}`, processes: [p], stop });
}
