/**
 * A tiny deduplicating work queue drained on the next turn of the event loop, so controllers
 * never run inside the request that triggered them (like their real, asynchronous counterparts).
 */
export class MicroQueue {
  private readonly pending = new Set<string>();
  private scheduled = false;
  private stopped = false;

  constructor(private readonly work: (key: string) => void) {}

  add(key: string): void {
    if (this.stopped) return;
    this.pending.add(key);
    if (!this.scheduled) {
      this.scheduled = true;
      setImmediate(() => this.drain());
    }
  }

  stop(): void {
    this.stopped = true;
    this.pending.clear();
  }

  private drain(): void {
    this.scheduled = false;
    const keys = [...this.pending];
    this.pending.clear();
    for (const k of keys) {
      try {
        this.work(k);
      } catch {
        // The object changed under us (conflict, already gone): the next event requeues it.
      }
    }
  }
}
