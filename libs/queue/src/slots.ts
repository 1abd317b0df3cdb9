/**
 * A counting semaphore with FIFO waiters: the consumer's concurrency limit across shards. Waiters
 * are shards that want work, so a finishing run hands its slot to them instead of keeping it.
 */
export class Slots {
  private free: number;
  private closed = false;
  private readonly waiters: ((granted: boolean) => void)[] = [];

  constructor(size: number) {
    this.free = size;
  }

  get hasWaiters(): boolean {
    return this.waiters.length > 0;
  }

  /**
   * Waits for one slot, then takes up to `max` without waiting; resolves how many it took, or 0
   * once the pool is closed (the consumer stops), so no caller waits for a slot forever.
   */
  async acquire(max: number): Promise<number> {
    if (this.closed) return 0;
    if (this.free > 0) this.free -= 1;
    else if (!(await new Promise<boolean>((resolve) => this.waiters.push(resolve)))) return 0;
    const extra = Math.min(this.free, max - 1);
    this.free -= extra;
    return 1 + extra;
  }

  release(count = 1): void {
    for (let i = 0; i < count; i++) {
      const next = this.waiters.shift();
      if (next) next(true);
      else this.free += 1;
    }
  }

  /** Refuses every waiting and later acquire (used to stop); releases still count. */
  close(): void {
    this.closed = true;
    for (const waiter of this.waiters.splice(0)) waiter(false);
  }
}
