import { parseMetrics, sumOf, type Sample } from '#bench/lib/prom';
import { API_VERSION, KIND } from '#api';
import { loadWorkerConfig } from '#config';
import { queueOptions } from '#runtime';
import { WorkQueue, type ShardDepth } from '#queue';
import type { KubeObject } from '#apiserver-emulator';
import { isReady, readyProcesses, type Sandbox, type SandboxProcess } from './sandbox.js';

export interface BackupJobSummary {
  key: string;
  ready: boolean;
  lastBackupTime: string | undefined;
}

/** One look at the running system. */
export interface Snapshot {
  at: Date;
  /** Names of the watchers that hold the Lease (one, or none during a hand-over). */
  leaders: string[];
  shards: ShardDepth[];
  /** Reconciles per second over the workers since the previous snapshot; undefined the first time. */
  reconcilesPerSecond: number | undefined;
  reconcilesTotal: number;
  readyProcesses: number;
  processes: number;
  /** Processes that exited, with their exit code (they are not restarted: their logs say why). */
  exited: string[];
  backupJobs: BackupJobSummary[];
}

async function scrape(p: SandboxProcess): Promise<Sample[]> {
  try {
    const res = await fetch(p.metricsUrl, { signal: AbortSignal.timeout(2000) });
    return parseMetrics(await res.text());
  } catch {
    return [];
  }
}

function summarize(bj: KubeObject): BackupJobSummary {
  return {
    key: `${bj.metadata.namespace}/${bj.metadata.name}`,
    ready: isReady(bj),
    lastBackupTime: (bj.status as { lastBackupTime?: string } | undefined)?.lastBackupTime,
  };
}

/**
 * Reads what the live summary shows: leader and reconcile counts from the processes' /metrics,
 * depth per shard from the queue in Redis (workqueue_depth has no shard label), BackupJobs from
 * the emulator.
 */
export class StatusSampler {
  private readonly queue: WorkQueue;
  private previous: { at: number; total: number } | undefined;

  constructor(private readonly sandbox: Sandbox) {
    this.queue = new WorkQueue(queueOptions(loadWorkerConfig(sandbox.queueEnv)));
  }

  async sample(): Promise<Snapshot> {
    const { watchers, workers, system } = this.sandbox;
    const [watcherMetrics, workerMetrics, shards, ready] = await Promise.all([
      Promise.all(watchers.map(scrape)),
      Promise.all(workers.map(scrape)),
      this.queue.depth().catch(() => []),
      readyProcesses([...watchers, ...workers]),
    ]);
    const at = Date.now();
    const total = workerMetrics.reduce(
      (sum, samples) => sum + sumOf(samples, 'controller_runtime_reconcile_total'),
      0,
    );
    const rate = this.previous
      ? (total - this.previous.total) / Math.max(0.001, (at - this.previous.at) / 1000)
      : undefined;
    this.previous = { at, total };
    return {
      at: new Date(at),
      leaders: watchers
        .filter((_, i) => sumOf(watcherMetrics[i]!, 'leader_election_master_status') > 0)
        .map((w) => w.name),
      shards,
      reconcilesPerSecond: rate,
      reconcilesTotal: total,
      readyProcesses: ready,
      processes: watchers.length + workers.length,
      exited: [...watchers, ...workers]
        .filter((p) => !p.process.running)
        .map((p) => `${p.name} (exit ${p.process.child.exitCode ?? p.process.child.signalCode})`),
      backupJobs: system.emulator.objects.list(API_VERSION, KIND).map(summarize),
    };
  }

  close(): Promise<void> {
    return this.queue.close();
  }
}
