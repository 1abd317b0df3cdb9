/**
 * Exponential backoff with jitter, client-go reflector's numbers (also kube-rs' watcher default):
 * 800 ms doubling to 30 s, ±jitter, so a fleet of watchers does not hammer a recovering API server
 * in lockstep.
 */
export interface BackoffOptions {
  readonly initialMs?: number;
  readonly maxMs?: number;
  readonly factor?: number;
  /** Fraction of each delay added at random: 0.2 → delay × [1, 1.2). */
  readonly jitter?: number;
}

export const defaultBackoff: Required<BackoffOptions> = {
  initialMs: 800,
  maxMs: 30_000,
  factor: 2,
  jitter: 0.2,
};

export class Backoff {
  private readonly options: Required<BackoffOptions>;
  private failures = 0;

  constructor(
    options: BackoffOptions = {},
    private readonly random: () => number = Math.random,
  ) {
    this.options = { ...defaultBackoff, ...options };
  }

  /** The delay before the next attempt; each call counts one more failure. */
  next(): number {
    const { initialMs, maxMs, factor, jitter } = this.options;
    const base = Math.min(maxMs, initialMs * factor ** this.failures);
    this.failures += 1;
    return Math.min(maxMs, base * (1 + jitter * this.random()));
  }

  reset(): void {
    this.failures = 0;
  }

  get attempts(): number {
    return this.failures;
  }
}

/** Resolves after `ms`, or at once when `signal` aborts; never rejects. */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal?.aborted) return resolve();
    const done = () => {
      clearTimeout(timer);
      signal?.removeEventListener('abort', done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal?.addEventListener('abort', done, { once: true });
  });
}
