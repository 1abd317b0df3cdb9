import type { WorkQueueMetrics } from '#queue';

/** client-go's ItemExponentialFailureRateLimiter: base·2^failures per item, capped. */
class ItemExponentialFailureRateLimiter<T> {
  private readonly failures = new Map<T, number>();

  constructor(
    private readonly baseMs = 5,
    private readonly maxMs = 1_000_000,
  ) {}

  when(item: T): number {
    const n = this.failures.get(item) ?? 0;
    this.failures.set(item, n + 1);
    return Math.min(this.maxMs, this.baseMs * 2 ** n);
  }

  forget(item: T): void {
    this.failures.delete(item);
  }

  numRequeues(item: T): number {
    return this.failures.get(item) ?? 0;
  }
}

/** A binary min-heap of items by ready time (client-go's waitForPriorityQueue). */
class ReadyHeap<T> {
  private readonly heap: { at: number; item: T }[] = [];

  get size(): number {
    return this.heap.length;
  }

  peek(): { at: number; item: T } | undefined {
    return this.heap[0];
  }

  push(entry: { at: number; item: T }): void {
    const h = this.heap;
    h.push(entry);
    for (let i = h.length - 1; i > 0;) {
      const p = (i - 1) >> 1;
      if ((h[p] as { at: number }).at <= entry.at) break;
      [h[i], h[p]] = [h[p] as { at: number; item: T }, entry];
      i = p;
    }
  }

  pop(): { at: number; item: T } | undefined {
    const h = this.heap;
    const top = h[0];
    const last = h.pop();
    if (h.length === 0 || !last) return top;
    h[0] = last;
    for (let i = 0; ;) {
      const l = 2 * i + 1;
      const r = l + 1;
      let m = i;
      if (l < h.length && (h[l] as { at: number }).at < (h[m] as { at: number }).at) m = l;
      if (r < h.length && (h[r] as { at: number }).at < (h[m] as { at: number }).at) m = r;
      if (m === i) break;
      [h[i], h[m]] = [h[m] as { at: number; item: T }, h[i] as { at: number; item: T }];
      i = m;
    }
    return top;
  }
}

/**
 * client-go's rate-limiting workqueue in one process: a FIFO with a dirty set (an item waits at
 * most once) and a processing set (an item re-added while it runs goes back in on Done, so it
 * never runs twice at once and no add is lost), a delaying heap that only ever moves an item's
 * ready time earlier, and per-item exponential backoff.
 */
export class RateLimitingQueue<T> {
  private queue: T[] = [];
  private head = 0;
  private readonly dirty = new Set<T>();
  private readonly processing = new Map<T, number>();
  private readonly addedAt = new Map<T, number>();
  private readonly waiting = new Map<T, number>();
  private readonly heap = new ReadyHeap<T>();
  private readonly getters: ((item: T | undefined) => void)[] = [];
  private timer: NodeJS.Timeout | undefined;
  private timerAt = Infinity;
  private shuttingDown = false;
  readonly limiter = new ItemExponentialFailureRateLimiter<T>();

  constructor(private readonly metrics?: WorkQueueMetrics) {
    metrics?.addProvider({
      depth: async () => this.len(),
      unfinishedWorkSeconds: () => this.unfinishedSeconds().sum,
      longestRunningProcessorSeconds: () => this.unfinishedSeconds().max,
    });
  }

  len(): number {
    return this.queue.length - this.head;
  }

  add(item: T): void {
    if (this.shuttingDown || this.dirty.has(item)) return;
    this.metrics?.incAdds(1);
    this.dirty.add(item);
    this.addedAt.set(item, performance.now());
    if (this.processing.has(item)) return;
    this.push(item);
  }

  /** Resolves with the next item, or undefined once shut down and drained. */
  get(): Promise<T | undefined> {
    if (this.len() > 0) return Promise.resolve(this.take());
    if (this.shuttingDown) return Promise.resolve(undefined);
    return new Promise((resolve) => this.getters.push(resolve));
  }

  done(item: T): void {
    const started = this.processing.get(item);
    if (started !== undefined)
      this.metrics?.observeWorkDuration((performance.now() - started) / 1000);
    this.processing.delete(item);
    if (this.dirty.has(item)) this.push(item);
  }

  addAfter(item: T, delayMs: number): void {
    if (this.shuttingDown) return;
    this.metrics?.incRetries();
    if (delayMs <= 0) return this.add(item);
    const at = performance.now() + delayMs;
    const current = this.waiting.get(item);
    if (current !== undefined && current <= at) return;
    this.waiting.set(item, at);
    this.heap.push({ at, item });
    this.arm();
  }

  addRateLimited(item: T): void {
    this.addAfter(item, this.limiter.when(item));
  }

  forget(item: T): void {
    this.limiter.forget(item);
  }

  shutDown(): void {
    this.shuttingDown = true;
    clearTimeout(this.timer);
    for (const resolve of this.getters.splice(0)) resolve(undefined);
  }

  private push(item: T): void {
    const getter = this.getters.shift();
    if (getter) {
      this.queue.push(item);
      getter(this.take());
      return;
    }
    this.queue.push(item);
  }

  private take(): T {
    const item = this.queue[this.head++] as T;
    if (this.head > 1024 && this.head * 2 > this.queue.length) {
      this.queue = this.queue.slice(this.head);
      this.head = 0;
    }
    const now = performance.now();
    this.processing.set(item, now);
    this.dirty.delete(item);
    const added = this.addedAt.get(item);
    this.addedAt.delete(item);
    if (added !== undefined) this.metrics?.observeQueueDuration((now - added) / 1000);
    return item;
  }

  private arm(): void {
    const next = this.heap.peek();
    if (!next || next.at >= this.timerAt) return;
    clearTimeout(this.timer);
    this.timerAt = next.at;
    this.timer = setTimeout(() => this.fire(), Math.max(0, next.at - performance.now()));
  }

  private fire(): void {
    this.timerAt = Infinity;
    const now = performance.now();
    for (let next = this.heap.peek(); next && next.at <= now; next = this.heap.peek()) {
      this.heap.pop();
      // A stale heap entry: the item's ready time moved earlier and it was already added.
      if (this.waiting.get(next.item) !== next.at) continue;
      this.waiting.delete(next.item);
      this.add(next.item);
    }
    this.arm();
  }

  private unfinishedSeconds(): { sum: number; max: number } {
    const now = performance.now();
    let sum = 0;
    let max = 0;
    for (const started of this.processing.values()) {
      const s = (now - started) / 1000;
      sum += s;
      max = Math.max(max, s);
    }
    return { sum, max };
  }
}
