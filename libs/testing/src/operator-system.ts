import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseAllDocuments } from 'yaml';
import {
  start as startEmulator,
  type Emulator,
  type StartOptions as EmulatorOptions,
  type KubeObject,
} from '#apiserver-emulator';
import { runCommand, type CommandResult } from './command.js';
import { freePort } from './ports.js';
import { startProcess, type ManagedProcess } from './process.js';
import type { RedisServer } from './redis-server.js';
import {
  externalRedis,
  startRedisDeployment,
  type RedisDeployment,
  type RedisMode,
} from './redis-deployment.js';

/** The namespace and ServiceAccounts the Helm chart creates (config/rbac is generated from the same rules). */
export const OPERATOR_NAMESPACE = 'backupjob-operator-system';
const SERVICE_ACCOUNTS = {
  watcher: 'backupjob-operator-watcher',
  worker: 'backupjob-operator-worker',
} as const;
type Component = keyof typeof SERVICE_ACCOUNTS;

const ENTRY_POINTS: Record<Component, string> = {
  watcher: fileURLToPath(new URL('../../../apps/watcher/src/main.js', import.meta.url)),
  worker: fileURLToPath(new URL('../../../apps/worker/src/main.js', import.meta.url)),
};

export interface OperatorSystemOptions {
  watchers?: number;
  workers?: number;
  /** Enforce RBAC in the emulator; the operator always runs under its ServiceAccounts' tokens. */
  rbac?: boolean;
  /** Install the BackupJob CRD before the operator starts (user-flow tests install it with kubectl). */
  installCrd?: boolean;
  /** Use this Redis instead of starting a private one. */
  redisUrl?: string;
  /** Use this Redis, in any mode (the caller stops it), instead of starting a private one. */
  redisDeployment?: RedisDeployment;
  /** The mode of the private Redis (default standalone): one server, a Cluster, or Sentinel. */
  redisMode?: RedisMode;
  emulator?: EmulatorOptions;
  /** Extra environment for every operator process (e.g. shorter lease timings). */
  env?: Record<string, string>;
  /** RBAC documents to apply instead of config/rbac (a test removes one rule). */
  rbacDocuments?: KubeObject[];
  /** The node arguments a component starts with, instead of its main.js. */
  entryPoints?: Partial<Record<Component, readonly string[]>>;
}

export type KubectlResult = CommandResult;

export interface KubectlOptions {
  input?: string;
  binary?: string;
  timeoutMs?: number;
}

/** Runs kubectl (or `binary`) with the given kubeconfig, without blocking the event loop. */
export function runKubectl(
  kubeconfigPath: string,
  args: string[],
  options: KubectlOptions = {},
): Promise<KubectlResult> {
  return runCommand(
    options.binary ?? 'kubectl',
    ['--kubeconfig', kubeconfigPath, ...args],
    options,
  );
}

export interface OperatorSystem {
  readonly emulator: Emulator;
  /** REDIS_URL of a standalone Redis; '' in the other modes (see redisDeployment). */
  readonly redisUrl: string;
  /** The private standalone server, when the system started one. */
  readonly redis: RedisServer | undefined;
  /** The Redis the processes use, in whichever mode. */
  readonly redisDeployment: RedisDeployment;
  /** The queue as the processes are configured: its name and number of shards. */
  readonly queue: { readonly name: string; readonly shards: number };
  /** Admin kubeconfig file, for kubectl and test assertions. */
  readonly kubeconfigPath: string;
  readonly watchers: ManagedProcess[];
  readonly workers: ManagedProcess[];
  startWatcher(env?: Record<string, string>): Promise<ManagedProcess>;
  startWorker(env?: Record<string, string>): Promise<ManagedProcess>;
  /** Runs the real kubectl (or `binary`) against the emulator as admin. */
  kubectl(args: string[], options?: KubectlOptions): Promise<KubectlResult>;
  /** Ports of a started process's metrics and health listeners. */
  portsOf(process: ManagedProcess): { metrics: number; health: number };
  stop(): Promise<void>;
}

/** Documents of config/rbac: the ServiceAccounts, Roles and bindings the chart gives the operator. */
export function operatorRbacDocuments(): KubeObject[] {
  return ['watcher', 'worker'].flatMap((c) =>
    parseAllDocuments(readFileSync(join(process.cwd(), 'config/rbac', `${c}.yaml`), 'utf8'))
      .map((d) => d.toJS() as KubeObject | null)
      .filter((d): d is KubeObject => d !== null),
  );
}

export function backupJobCrdDocument(): KubeObject {
  const text = readFileSync(
    join(process.cwd(), 'config/crd/bases/ops.example.com_backupjobs.yaml'),
    'utf8',
  );
  return parseAllDocuments(text)[0]!.toJS() as KubeObject;
}

/**
 * The whole system as production runs it, on one machine: the API emulator as the cluster, a
 * private Redis, watcher and worker processes started from the built entry points under the
 * chart's ServiceAccount identities.
 */
export async function startOperatorSystem(
  options: OperatorSystemOptions = {},
): Promise<OperatorSystem> {
  // Read before anything starts: a missing file then leaves no emulator or Redis behind.
  const crd = (options.installCrd ?? true) ? backupJobCrdDocument() : undefined;
  const rbacDocuments = options.rbacDocuments ?? operatorRbacDocuments();
  const dir = mkdtempSync(join(tmpdir(), 'operator-system-'));
  const emulator = await startEmulator({
    port: 0,
    tls: true,
    rbac: options.rbac ?? false,
    ...options.emulator,
    // After the caller's options: the operator's own namespace must exist whatever else is asked.
    namespaces: [OPERATOR_NAMESPACE, ...(options.emulator?.namespaces ?? [])],
  });
  let deployment: RedisDeployment;
  try {
    deployment =
      options.redisDeployment ??
      (options.redisUrl
        ? externalRedis({ REDIS_URL: options.redisUrl })
        : await startRedisDeployment(options.redisMode ?? 'standalone'));
  } catch (err) {
    // The caller gets no system to stop: a listening emulator would keep its process alive.
    await emulator.stop();
    rmSync(dir, { recursive: true, force: true });
    throw err;
  }
  const ownsRedis = !options.redisDeployment && !options.redisUrl;
  const redisUrl = deployment.env.REDIS_URL ?? '';
  const kubeconfigPath = join(dir, 'admin.kubeconfig');
  writeFileSync(kubeconfigPath, emulator.kubeconfig);

  if (crd) emulator.objects.create(crd);
  for (const doc of rbacDocuments) emulator.objects.create(doc);

  const kubeconfigs: Record<Component, string> = { watcher: '', worker: '' };
  for (const component of Object.keys(SERVICE_ACCOUNTS) as Component[]) {
    kubeconfigs[component] = join(dir, `${component}.kubeconfig`);
    writeFileSync(
      kubeconfigs[component],
      emulator.kubeconfigForServiceAccount(OPERATOR_NAMESPACE, SERVICE_ACCOUNTS[component]),
    );
  }

  const watchers: ManagedProcess[] = [];
  const workers: ManagedProcess[] = [];
  const ports = new Map<ManagedProcess, { metrics: number; health: number }>();
  const counters: Record<Component, number> = { watcher: 0, worker: 0 };

  async function launch(
    component: Component,
    env: Record<string, string> = {},
  ): Promise<ManagedProcess> {
    const index = counters[component]++;
    const metrics = await freePort();
    const health = await freePort();
    const proc = startProcess({
      name: `${component}-${index}`,
      command: process.execPath,
      args: [...(options.entryPoints?.[component] ?? [ENTRY_POINTS[component]])],
      env: {
        KUBECONFIG: kubeconfigs[component],
        ...deployment.env,
        METRICS_PORT: String(metrics),
        HEALTH_PORT: String(health),
        METRICS_BIND_ADDRESS: '127.0.0.1',
        HEALTH_BIND_ADDRESS: '127.0.0.1',
        POD_NAME: `${component}-${index}`,
        POD_NAMESPACE: OPERATOR_NAMESPACE,
        LEADER_ELECTION_NAMESPACE: OPERATOR_NAMESPACE,
        QUEUE_SHARDS: '4',
        LOG_LEVEL: 'debug',
        ...options.env,
        ...env,
      },
    });
    ports.set(proc, { metrics, health });
    (component === 'watcher' ? watchers : workers).push(proc);
    return proc;
  }

  for (let i = 0; i < (options.watchers ?? 2); i++) await launch('watcher');
  for (let i = 0; i < (options.workers ?? 2); i++) await launch('worker');

  const env: Record<string, string> = { QUEUE_SHARDS: '4', ...options.env };
  return {
    emulator,
    redisUrl,
    redis: ownsRedis ? deployment.server : undefined,
    redisDeployment: deployment,
    queue: { name: env.QUEUE_NAME ?? 'backupjob', shards: Number(env.QUEUE_SHARDS) },
    kubeconfigPath,
    watchers,
    workers,
    startWatcher: (env) => launch('watcher', env),
    startWorker: (env) => launch('worker', env),
    kubectl: (args, kubectlOptions) => runKubectl(kubeconfigPath, args, kubectlOptions),
    portsOf(proc) {
      const p = ports.get(proc);
      if (!p) throw new Error(`${proc.name} was not started by this system`);
      return p;
    },
    async stop() {
      await Promise.all([...watchers, ...workers].map((p) => p.stop('SIGTERM')));
      await emulator.stop();
      if (ownsRedis) await deployment.stop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/**
 * Resolves once a watcher leads and every worker consumes keys: where a scenario's clock may
 * start, so the time processes take to start on a loaded machine is not charged to what the
 * scenario waits for.
 */
export async function untilWorking(sys: OperatorSystem, timeoutMs = 60_000): Promise<void> {
  const leader = Promise.any(
    sys.watchers.map((w) => w.waitForLine(/"msg":"became leader"/, timeoutMs)),
  ).catch((err: AggregateError) => {
    const why = (err.errors as Error[]).map((e) => e.message).join('\n');
    throw new Error(`no watcher became leader:\n${why}`);
  });
  await Promise.all([
    leader,
    ...sys.workers.map((w) => w.waitForLine(/"msg":"consuming keys"/, timeoutMs)),
  ]);
}
