/**
 * A counting semaphore with FIFO waiters: the consumer's concurrency limit across shards. Waiters
 * are shards that want work, so a finishing run hands its slot to them instead of keeping it.
 */
export class Slots {
  private free: number;
  private readonly waiters: (() => void)[] = [];

  constructor(size: number) {
    this.free = size;
  }

  get hasWaiters(): boolean {
    return this.waiters.length > 0;
  }

  /** Waits for one slot, then takes up to `max` without waiting; resolves how many it took. */
  async acquire(max: number): Promise<number> {
    if (this.free === 0) await new Promise<void>((resolve) => this.waiters.push(resolve));
    else this.free -= 1;
    const extra = Math.min(this.free, max - 1);
    this.free -= extra;
    return 1 + extra;
  }

  release(count = 1): void {
    for (let i = 0; i < count; i++) {
      const next = this.waiters.shift();
      if (next) next();
      else this.free += 1;
    }
  }

  /** Wakes every waiter with a slot it must give back (used to stop). */
  releaseWaiters(): void {
    for (const waiter of this.waiters.splice(0)) {
      this.free -= 1;
      waiter();
    }
  }
}
