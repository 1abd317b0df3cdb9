/**
 * Exponential backoff with jitter, client-go reflector's numbers (also kube-rs' watcher default):
 * 800 ms doubling to 30 s, ±jitter, so a fleet of watchers does not hammer a recovering API server
 * in lockstep; and client-go's BackoffManager reset: a failure long after the previous one starts
 * over from the first delay.
 */
export interface BackoffOptions {
  readonly initialMs?: number;
  readonly maxMs?: number;
  readonly factor?: number;
  /** Fraction of each delay added at random: 0.2 → delay × [1, 1.2). */
  readonly jitter?: number;
  /** A failure at least this long after the previous one counts as the first (client-go: 2 min). */
  readonly resetAfterMs?: number;
}

export const defaultBackoff: Required<BackoffOptions> = {
  initialMs: 800,
  maxMs: 30_000,
  factor: 2,
  jitter: 0.2,
  resetAfterMs: 120_000,
};

export class Backoff {
  private readonly options: Required<BackoffOptions>;
  private failures = 0;
  private lastFailureAt = -Infinity;

  constructor(
    options: BackoffOptions = {},
    private readonly random: () => number = Math.random,
    private readonly now: () => number = () => performance.now(),
  ) {
    this.options = { ...defaultBackoff, ...options };
  }

  /** The delay before the next attempt; each call counts one more failure. */
  next(): number {
    const { initialMs, maxMs, factor } = this.options;
    this.resetIfQuiet();
    const base = Math.min(maxMs, initialMs * factor ** this.failures);
    this.failures += 1;
    return this.jittered(base);
  }

  /**
   * The delay before the next attempt when the server said how long to wait (Retry-After): that
   * long, jittered and capped like any delay, without growing the exponential delay, which is ours
   * to pace failures the server did not explain.
   */
  after(serverDelayMs: number): number {
    this.resetIfQuiet();
    return this.jittered(Math.max(0, serverDelayMs));
  }

  reset(): void {
    this.failures = 0;
  }

  get attempts(): number {
    return this.failures;
  }

  private resetIfQuiet(): void {
    const now = this.now();
    if (now - this.lastFailureAt >= this.options.resetAfterMs) this.failures = 0;
    this.lastFailureAt = now;
  }

  private jittered(base: number): number {
    const { maxMs, jitter } = this.options;
    return Math.min(maxMs, base * (1 + jitter * this.random()));
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
