import type { HealthRegistry } from './health.js';
import type { Logger } from '#observability';

/**
 * The order of a graceful stop: stop taking keys, let in-flight reconciles finish (or hand them
 * back), release the Lease so a standby takes over at once, then close connections.
 */
export const SHUTDOWN_PHASES = ['stop-intake', 'drain', 'release', 'close'] as const;
export type ShutdownPhase = (typeof SHUTDOWN_PHASES)[number];

/** `signal` aborts when the grace period is over: hand work back instead of finishing it. */
export type ShutdownHook = (signal: AbortSignal) => Promise<void> | void;

/** Time a phase still gets after the grace period ran out, so the Lease is released and sockets closed. */
const LATE_PHASE_MS = 1000;

interface Registered {
  readonly phase: ShutdownPhase;
  readonly name: string;
  readonly hook: ShutdownHook;
}

export interface ShutdownResult {
  /** `phase:name` of every hook that failed or did not finish in time. */
  readonly unfinished: readonly string[];
}

/**
 * Runs the registered hooks phase by phase within the shutdown grace period. Hooks of one phase
 * run concurrently; a phase starts when the previous one has finished or timed out.
 */
export class ShutdownCoordinator {
  private readonly hooks: Registered[] = [];
  private running: Promise<ShutdownResult> | undefined;

  constructor(
    private readonly gracePeriodMs: number,
    private readonly logger: Logger,
  ) {}

  get shuttingDown(): boolean {
    return this.running !== undefined;
  }

  /** Adds a hook to a phase; returns a function that removes it (a component that stopped early). */
  onShutdown(phase: ShutdownPhase, name: string, hook: ShutdownHook): () => void {
    const entry = { phase, name, hook };
    this.hooks.push(entry);
    return () => {
      const index = this.hooks.indexOf(entry);
      if (index >= 0) this.hooks.splice(index, 1);
    };
  }

  /** Readiness turns false as soon as shutdown begins, so nothing new is routed here. */
  registerReadiness(health: HealthRegistry): void {
    health.register({
      name: 'shutdown',
      check: () => {
        if (this.shuttingDown) throw new Error('shutting down');
      },
    });
  }

  /** Idempotent: a second signal waits for the first shutdown. */
  shutdown(reason: string): Promise<ShutdownResult> {
    this.running ??= this.run(reason);
    return this.running;
  }

  private async run(reason: string): Promise<ShutdownResult> {
    const deadline = Date.now() + this.gracePeriodMs;
    const graceOver = new AbortController();
    const timer = setTimeout(() => graceOver.abort(), this.gracePeriodMs);
    this.logger.info('shutting down', { reason, gracePeriodMs: this.gracePeriodMs });
    const unfinished: string[] = [];
    try {
      for (const phase of SHUTDOWN_PHASES) {
        const budget = Math.max(deadline - Date.now(), LATE_PHASE_MS);
        const hooks = this.hooks.filter((h) => h.phase === phase);
        unfinished.push(...(await this.runPhase(hooks, budget, graceOver.signal)));
      }
    } finally {
      clearTimeout(timer);
    }
    if (unfinished.length > 0) this.logger.error('shutdown incomplete', { unfinished });
    else this.logger.info('shutdown complete');
    return { unfinished };
  }

  private async runPhase(hooks: Registered[], budgetMs: number, signal: AbortSignal) {
    const outcomes = await Promise.all(hooks.map((h) => this.runHook(h, budgetMs, signal)));
    return hooks.filter((_, i) => !outcomes[i]).map((h) => `${h.phase}:${h.name}`);
  }

  private async runHook(entry: Registered, budgetMs: number, signal: AbortSignal) {
    let timer: NodeJS.Timeout | undefined;
    const timedOut = new Promise<false>((resolve) => {
      timer = setTimeout(() => resolve(false), budgetMs);
    });
    const finished = (async () => {
      try {
        await entry.hook(signal);
        return true;
      } catch (err) {
        this.logger.error('shutdown hook failed', { phase: entry.phase, hook: entry.name, err });
        return false;
      }
    })();
    try {
      return await Promise.race([finished, timedOut]);
    } finally {
      clearTimeout(timer);
    }
  }
}
