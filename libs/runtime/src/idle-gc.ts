import { Session } from 'node:inspector/promises';
import { performance, type EventLoopUtilization } from 'node:perf_hooks';
import type { Logger } from '#observability';

/**
 * When a quiet process collects its garbage itself. V8 collects when allocation pushes the heap
 * to its current limit; a process that goes quiet after a burst (a watcher's first pass over
 * 50,000 objects, a worker after a resync) allocates almost nothing afterwards, so the garbage of
 * the burst stays in its heap, and in its RSS, until the next burst: measured at 10k and 50k
 * BackupJobs, a watcher idle for 30 s held 1.5–3 times the heap it needed. Browsers collect in
 * idle time; Node does not, so the process does it here.
 */
export interface IdleGcPolicy {
  /** How often the heap and the event loop are looked at. */
  readonly intervalMs: number;
  /** The most the event loop may have been busy over the interval for the process to count as idle. */
  readonly maxUtilization: number;
  /** The heap must have grown by at least this many bytes over what survived the last collection… */
  readonly minGrowthBytes: number;
  /** …and by this share of it, so that a large live heap is not collected for a little garbage. */
  readonly minGrowthRatio: number;
}

export const idleGcDefaults: IdleGcPolicy = {
  intervalMs: 10_000,
  maxUtilization: 0.05,
  minGrowthBytes: 32 * 1024 * 1024,
  minGrowthRatio: 0.5,
};

/** One look at the process: the heap in use now, what survived the last collection, how busy it was. */
export interface IdleGcSample {
  readonly heapUsed: number;
  readonly liveAfterLastGc: number;
  readonly utilization: number;
}

/** Whether the process is quiet and holds enough garbage for a full collection to be worth it. */
export function shouldCollect(sample: IdleGcSample, policy: IdleGcPolicy): boolean {
  const growth = sample.heapUsed - sample.liveAfterLastGc;
  const threshold = Math.max(policy.minGrowthBytes, policy.minGrowthRatio * sample.liveAfterLastGc);
  return sample.utilization <= policy.maxUtilization && growth >= threshold;
}

/** A full, compacting collection that gives freed pages back to the system. */
export type FullGc = () => Promise<void>;

/**
 * Through the inspector protocol in this process, as a heap profiler asks for it: no command-line
 * flag (`--expose-gc`) is needed, and the collection is the one that also shrinks the heap.
 */
export async function inspectorFullGc(): Promise<FullGc> {
  const session = new Session();
  session.connect();
  return async () => {
    await session.post('HeapProfiler.collectGarbage');
  };
}

/**
 * Looks at the process every `intervalMs` and runs a full collection when shouldCollect says so.
 * The timer does not keep the process alive.
 */
export class IdleGc {
  private timer: NodeJS.Timeout | undefined;
  private liveAfterLastGc = process.memoryUsage().heapUsed;
  private lastLoop: EventLoopUtilization = performance.eventLoopUtilization();
  private collecting = false;

  constructor(
    private readonly gc: FullGc,
    private readonly log: Logger,
    private readonly policy: IdleGcPolicy = idleGcDefaults,
  ) {}

  start(): void {
    this.timer ??= setInterval(() => void this.look(), this.policy.intervalMs).unref();
  }

  stop(): void {
    clearInterval(this.timer);
    this.timer = undefined;
  }

  private async look(): Promise<void> {
    const loop = performance.eventLoopUtilization();
    const utilization = performance.eventLoopUtilization(loop, this.lastLoop).utilization;
    this.lastLoop = loop;
    const heapUsed = process.memoryUsage().heapUsed;
    // Right after a collection of V8's own the heap in use is what survived it: never more.
    this.liveAfterLastGc = Math.min(this.liveAfterLastGc, heapUsed);
    const sample = { heapUsed, liveAfterLastGc: this.liveAfterLastGc, utilization };
    if (this.collecting || !shouldCollect(sample, this.policy)) return;
    this.collecting = true;
    const started = performance.now();
    try {
      await this.gc();
      this.liveAfterLastGc = process.memoryUsage().heapUsed;
      this.log.info('collected garbage while idle', {
        heapBeforeMiB: mib(heapUsed),
        heapAfterMiB: mib(this.liveAfterLastGc),
        durationMs: Math.round(performance.now() - started),
      });
    } catch (err) {
      this.log.warn('could not collect garbage while idle', { err });
    } finally {
      this.collecting = false;
      // The collection itself kept the loop busy; the next look judges the time after it.
      this.lastLoop = performance.eventLoopUtilization();
    }
  }
}

function mib(bytes: number): number {
  return Math.round(bytes / 1024 / 1024);
}
