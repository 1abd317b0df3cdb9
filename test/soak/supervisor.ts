import type { ManagedProcess, OperatorSystem } from '#testing';

/**
 * What the Deployments do for the soak: keeps the wanted number of watchers and workers running,
 * starting a new one shortly after any exits, however it ended (a fault killed it, or a watcher
 * that lost its Lease exited to restart clean). Remembers every process it ever ran and when each
 * SIGKILLed worker died, for the overlap check over the whole run.
 */
export class Supervisor {
  readonly killedAt = new Map<ManagedProcess, number>();
  private supervising = true;
  private readonly starting = new Set<Promise<unknown>>();

  constructor(
    private readonly sys: OperatorSystem,
    private readonly restartDelayMs = 500,
  ) {
    for (const w of sys.watchers) this.watch(w, () => sys.startWatcher());
    for (const w of sys.workers) this.watch(w, () => sys.startWorker());
  }

  /** Every worker ever started, the dead included. */
  get allWorkers(): readonly ManagedProcess[] {
    return this.sys.workers;
  }

  runningWatchers(): ManagedProcess[] {
    return this.sys.watchers.filter((w) => w.running);
  }

  runningWorkers(): ManagedProcess[] {
    return this.sys.workers.filter((w) => w.running);
  }

  /** SIGKILL, noted so the overlap check ends the process's unfinished run at its death. */
  kill(proc: ManagedProcess): void {
    if (!proc.running) return;
    if (this.sys.workers.includes(proc)) this.killedAt.set(proc, Date.now());
    proc.child.kill('SIGKILL');
  }

  /** Stops replacing processes; waits for replacements already starting. */
  async stop(): Promise<void> {
    this.supervising = false;
    await Promise.allSettled([...this.starting]);
  }

  private watch(proc: ManagedProcess, start: () => Promise<ManagedProcess>): void {
    void proc.exited.then(async () => {
      if (!this.supervising) return;
      await new Promise((r) => setTimeout(r, this.restartDelayMs));
      if (!this.supervising) return;
      const replacement = start().then((next) => this.watch(next, start));
      this.starting.add(replacement);
      void replacement.finally(() => this.starting.delete(replacement));
    });
  }
}
