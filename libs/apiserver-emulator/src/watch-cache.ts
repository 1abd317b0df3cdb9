import type { KubeObject } from './types.js';

export type EventType = 'ADDED' | 'MODIFIED' | 'DELETED';

/**
 * One change of one object. `json` is the stored object serialised once at write time; every
 * watcher that wants the same wire form shares the line cached in `lines`.
 */
export interface WatchEvent {
  type: EventType;
  rv: number;
  obj: KubeObject;
  json: string;
  /** The object before this change, for selector transitions (MODIFIED → ADDED/DELETED). */
  prev?: KubeObject;
  lines?: Map<string, string>;
}

export interface WatchSubscriber {
  onEvent(event: WatchEvent): void;
}

/**
 * The recent history of one storage plus its live subscribers, like the apiserver's watch
 * cache: a watch may resume from any resourceVersion still in the window, older ones get 410.
 */
export class WatchCache {
  private readonly ring: (WatchEvent | undefined)[];
  private head = 0;
  private count = 0;
  /** Every event newer than this resourceVersion is still in the ring. */
  oldestServable = 0;
  readonly subscribers = new Set<WatchSubscriber>();

  constructor(capacity: number) {
    this.ring = new Array<WatchEvent | undefined>(Math.max(1, capacity));
  }

  push(event: WatchEvent): void {
    const cap = this.ring.length;
    if (this.count === cap) {
      const evicted = this.ring[this.head];
      if (evicted) this.oldestServable = evicted.rv;
      this.ring[this.head] = event;
      this.head = (this.head + 1) % cap;
    } else {
      this.ring[(this.head + this.count) % cap] = event;
      this.count++;
    }
    for (const s of this.subscribers) s.onEvent(event);
    // Wire lines are shared by the live watchers only; replays rebuild them, so history stays small.
    event.lines = undefined;
  }

  /** Events with rv > since, oldest first; undefined when some were already evicted. */
  since(rv: number): WatchEvent[] | undefined {
    if (rv < this.oldestServable) return undefined;
    const out: WatchEvent[] = [];
    const cap = this.ring.length;
    for (let i = this.count - 1; i >= 0; i--) {
      const e = this.ring[(this.head + i) % cap]!;
      if (e.rv <= rv) break;
      out.push(e);
    }
    return out.reverse();
  }

  /** Forgets history up to rv (etcd compaction). */
  compact(rv: number): void {
    const cap = this.ring.length;
    while (this.count > 0) {
      const e = this.ring[this.head]!;
      if (e.rv > rv) break;
      this.ring[this.head] = undefined;
      this.head = (this.head + 1) % cap;
      this.count--;
    }
    this.oldestServable = Math.max(this.oldestServable, rv);
  }
}
