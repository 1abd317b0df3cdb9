import { waitFor } from '#testing';
import { EmulatorHandle } from './emulator.js';
import type { Progress } from './tracker.js';

/** Mean API latency injected per request, with ±25 % uniform jitter around it. */
function latencyFault(meanMs: number): { ms: number; jitterMs: number } {
  return { ms: meanMs * 0.75, jitterMs: meanMs * 0.5 };
}

export const PREFIX = 'bj';

export interface WorldOptions {
  readonly latencyMs: number;
  /** BackupJobs that exist before the system starts. */
  readonly objects?: number;
  /** Whether those already carry what the operator writes (CronJob, finalizer, Ready status). */
  readonly converged?: boolean;
  /** Finished Jobs of each converged BackupJob's CronJob. */
  readonly jobsPerObject?: number;
  /** Profile the emulator's CPU into this directory. */
  readonly profileDir?: string;
  /** Each BackupJob names a Secret of its own, opted in. */
  readonly secretRef?: boolean;
  /** The emulator serves HTTPS, as a cluster's API server does (default: plain HTTP). */
  readonly tls?: boolean;
}

/** A fresh emulator for one measurement, seeded and with its latency set; always stopped. */
export async function withWorld<T>(
  o: WorldOptions,
  body: (emu: EmulatorHandle) => Promise<T>,
): Promise<T> {
  const emu = await EmulatorHandle.start(o.profileDir, o.tls);
  try {
    const count = o.objects ?? 0;
    // Seeding in slices keeps each IPC call short, so a 50k seed does not look like a hang.
    for (let from = 0; from < count; from += 5000) {
      await emu.call('create', {
        prefix: PREFIX,
        from,
        count: Math.min(5000, count - from),
        converged: o.converged,
        jobs: o.jobsPerObject,
        secretRef: o.secretRef,
      });
    }
    await emu.call('setLatency', latencyFault(o.latencyMs));
    return await body(emu);
  } finally {
    await emu.stop();
  }
}

/**
 * Polls the emulator's progress until `done` holds or `timeoutMs` passes; resolves with the last
 * progress either way, so a run that hits its cap still reports how far it got.
 */
export async function waitForProgress(
  emu: EmulatorHandle,
  done: (p: Progress) => boolean,
  timeoutMs: number,
  intervalMs = 100,
): Promise<{ progress: Progress; finished: boolean }> {
  const { value, finished } = await waitFor(
    () => emu.call('progress', undefined),
    done,
    timeoutMs,
    intervalMs,
  );
  return { progress: value, finished };
}
