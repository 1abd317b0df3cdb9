import {
  appendFileSync,
  existsSync,
  mkdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { join, resolve } from 'node:path';
import { parseAllDocuments } from 'yaml';
import { API_VERSION, KIND } from '#api';
import { ScheduleAccelerator, type KubeObject } from '#apiserver-emulator';
import { freePort, startOperatorSystem, type OperatorSystem, type ManagedProcess } from '#testing';
import type { DevOptions } from './args.js';
import { sandboxRedis, type SandboxRedis } from './redis.js';

const SAMPLE_FILE = 'config/samples/ops_v1alpha1_backupjob.yaml';
/** Fewer shards than production's 16 keep the live summary readable. */
const SANDBOX_SHARDS = 4;

export interface SandboxProcess {
  readonly name: string;
  readonly pid: number;
  readonly metricsUrl: string;
  readonly healthUrl: string;
  readonly process: ManagedProcess;
}

export interface Sandbox {
  readonly system: OperatorSystem;
  readonly redis: SandboxRedis;
  /** Admin kubeconfig the user's kubectl reads (`export KUBECONFIG=...`). */
  readonly kubeconfigPath: string;
  readonly logDir: string;
  readonly sample: { namespace: string; name: string };
  readonly watchers: SandboxProcess[];
  readonly workers: SandboxProcess[];
  /** The watcher's read-only queue dashboard, when --dashboard asked for it. */
  readonly dashboardUrl: string | undefined;
  /** Environment the operator processes read their queue settings from. */
  readonly queueEnv: Record<string, string>;
  /** Moves the processes' output to their log files (the harness keeps it in memory for tests). */
  flushLogs(): void;
  stop(): Promise<void>;
}

function sandboxPaths(dir: string) {
  const state = resolve(dir);
  return { kubeconfig: join(state, 'kubeconfig'), logs: join(state, 'logs') };
}

function readSample(): KubeObject {
  if (!existsSync(SAMPLE_FILE))
    throw new Error(`${SAMPLE_FILE} not found: run the sandbox from the repository root`);
  // The file also creates the BackupJob's namespace, which the emulator is started with.
  const documents = parseAllDocuments(readFileSync(SAMPLE_FILE, 'utf8'));
  const sample = documents.map((d) => d.toJS() as KubeObject).find((o) => o.kind === KIND);
  if (!sample) throw new Error(`${SAMPLE_FILE} has no BackupJob`);
  return sample;
}

/**
 * Starts the whole system on this machine: the API emulator (with the CronJob and Job
 * simulations), Redis, one watcher and `workers` workers, the CRD and the sample BackupJob.
 */
export async function startSandbox(options: DevOptions): Promise<Sandbox> {
  const sample = readSample();
  const namespace = sample.metadata.namespace!;
  const redis = await sandboxRedis(process.env, options.redis);
  const paths = sandboxPaths(options.dir);
  // Each run starts its logs afresh.
  rmSync(paths.logs, { recursive: true, force: true });
  mkdirSync(paths.logs, { recursive: true });
  const queueEnv = { ...redis.env, QUEUE_SHARDS: String(SANDBOX_SHARDS) };
  let system: OperatorSystem;
  let dashboardUrl: string | undefined;
  try {
    // Only the watcher reads these: the dashboard is served by the watcher.
    const dashboardEnv: Record<string, string> = {};
    if (options.dashboard) {
      const port = await freePort();
      dashboardEnv.QUEUE_DASHBOARD_PORT = String(port);
      dashboardEnv.QUEUE_DASHBOARD_BIND_ADDRESS = '127.0.0.1';
      dashboardUrl = `http://127.0.0.1:${port}/`;
    }
    system = await startOperatorSystem({
      watchers: 1,
      workers: options.workers,
      redisDeployment: redis.deployment,
      env: { ...queueEnv, ...dashboardEnv, LOG_LEVEL: process.env.LOG_LEVEL || 'info' },
      emulator: {
        namespaces: [namespace],
        controllers: {
          jobs: { outcome: 'succeed' },
          // With --simulate-backups the accelerator alone decides when a schedule is due.
          cronJobs: { schedule: !options.simulateBackups },
        },
      },
    });
  } catch (e) {
    if (redis.owned) await redis.deployment.stop();
    throw e;
  }
  writeFileSync(paths.kubeconfig, system.emulator.kubeconfig, { mode: 0o600 });
  const accelerator = options.simulateBackups
    ? new ScheduleAccelerator(system.emulator, { factor: options.clockFactor })
    : undefined;
  system.emulator.objects.create(sample);

  const describe = (p: ManagedProcess): SandboxProcess => {
    const ports = system.portsOf(p);
    return {
      name: p.name,
      pid: p.child.pid!,
      metricsUrl: `http://127.0.0.1:${ports.metrics}/metrics`,
      healthUrl: `http://127.0.0.1:${ports.health}`,
      process: p,
    };
  };
  const all = () => [...system.watchers, ...system.workers];
  const flushLogs = () => {
    for (const p of all()) {
      if (p.lines.length === 0) continue;
      const lines = p.lines.splice(0, p.lines.length);
      appendFileSync(join(paths.logs, `${p.name}.log`), lines.join('\n') + '\n');
    }
  };
  return {
    system,
    redis,
    kubeconfigPath: paths.kubeconfig,
    logDir: paths.logs,
    sample: { namespace, name: sample.metadata.name! },
    watchers: system.watchers.map(describe),
    workers: system.workers.map(describe),
    dashboardUrl,
    queueEnv,
    flushLogs,
    async stop() {
      accelerator?.stop();
      await system.stop();
      flushLogs();
      if (redis.owned) await redis.deployment.stop();
    },
  };
}

/** True when the BackupJob reports the condition Ready=True. */
export function isReady(obj: KubeObject | undefined): boolean {
  const conditions = (obj?.status as { conditions?: { type: string; status: string }[] })
    ?.conditions;
  return conditions?.some((c) => c.type === 'Ready' && c.status === 'True') ?? false;
}

async function answers(url: string): Promise<boolean> {
  try {
    const res = await fetch(url, { signal: AbortSignal.timeout(2000) });
    await res.arrayBuffer();
    return res.ok;
  } catch {
    return false;
  }
}

/** How many of the processes answer /readyz with 200. */
export async function readyProcesses(processes: readonly SandboxProcess[]): Promise<number> {
  const results = await Promise.all(processes.map((p) => answers(`${p.healthUrl}/readyz`)));
  return results.filter(Boolean).length;
}

/**
 * Waits until every process is ready and the sample BackupJob is Ready=True; throws naming what
 * is missing (or the process that exited) when that does not happen within `timeoutMs`.
 */
export async function waitUntilReady(sandbox: Sandbox, timeoutMs = 120_000): Promise<void> {
  const processes = [...sandbox.watchers, ...sandbox.workers];
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const exited = processes.find((p) => !p.process.running);
    if (exited) {
      // The log folder goes when the sandbox stops, so the error carries the process's last words.
      const last = exited.process.lines.slice(-5).map((line) => `\n  ${line}`);
      throw new Error(`${exited.name} exited during start:${last.join('')}`);
    }
    const ready = await readyProcesses(processes);
    const { namespace, name } = sandbox.sample;
    const bj = sandbox.system.emulator.objects.get(API_VERSION, KIND, name, namespace);
    if (ready === processes.length && isReady(bj)) return;
    if (Date.now() > deadline)
      throw new Error(
        `not ready after ${timeoutMs / 1000}s: ${ready}/${processes.length} processes ready, ` +
          `BackupJob ${namespace}/${name} Ready=${isReady(bj)}; see ${sandbox.logDir}`,
      );
    sandbox.flushLogs();
    await new Promise((r) => setTimeout(r, 250));
  }
}
