/**
 * The consumer's concurrency limit across shards: `size` slots, each held by one run of one shard,
 * shared fairly between the shards that want work (max-min).
 *
 * A shard's share is `size` divided by the shards that hold or wait for a slot, rounded down. A
 * run that ends keeps its slot for the shard's next job (which BullMQ hands out in the same call
 * that finishes the run) unless its shard holds more than its share and another shard that holds
 * fewer waits; a slot given back goes to the waiting shard that holds the fewest, first come among
 * equals. A busy shard thus never waits behind its own finish, and a shard that wakes up gets a
 * slot as soon as one held above a share comes free.
 */
interface Waiter {
  shard: number;
  grant: (granted: boolean) => void;
}

export class Slots {
  private free: number;
  private closed = false;
  private readonly held = new Map<number, number>();
  private readonly waiters: Waiter[] = [];

  constructor(private readonly size: number) {
    this.free = size;
  }

  /**
   * Waits for a slot for `shard`; resolves false once the pool is closed (the consumer stops), so
   * no caller waits for a slot forever.
   */
  async acquire(shard: number): Promise<boolean> {
    if (this.closed) return false;
    if (this.free > 0) {
      this.free -= 1;
      this.take(shard);
      return true;
    }
    return new Promise<boolean>((grant) => this.waiters.push({ shard, grant }));
  }

  /** Gives back a slot `shard` held: to the waiting shard that holds the fewest, else to the pool. */
  release(shard: number): void {
    this.held.set(shard, this.holds(shard) - 1);
    let waiter: Waiter | undefined;
    for (const w of this.waiters)
      if (!waiter || this.holds(w.shard) < this.holds(waiter.shard)) waiter = w;
    if (!waiter) {
      this.free += 1;
      return;
    }
    this.waiters.splice(this.waiters.indexOf(waiter), 1);
    this.take(waiter.shard);
    waiter.grant(true);
  }

  /** Whether a run of `shard` that ends should keep its slot for the shard's next job. */
  keeps(shard: number): boolean {
    const mine = this.holds(shard);
    if (!this.waiters.some((w) => w.shard !== shard && this.holds(w.shard) < mine)) return true;
    const wanting = new Set(this.waiters.map((w) => w.shard));
    for (const [s, count] of this.held) if (count > 0) wanting.add(s);
    return mine <= Math.floor(this.size / wanting.size);
  }

  /** Refuses every waiting and later acquire (used to stop); releases still count. */
  close(): void {
    this.closed = true;
    for (const waiter of this.waiters.splice(0)) waiter.grant(false);
  }

  private holds(shard: number): number {
    return this.held.get(shard) ?? 0;
  }

  private take(shard: number): void {
    this.held.set(shard, this.holds(shard) + 1);
  }
}
