import type { ObjectService } from '../objects.js';
import type { ResourceType } from '../resource-type.js';
import type { StoreChange } from '../store.js';

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

/**
 * A controller fed by store changes: `observe` picks the keys a change concerns, `sync` handles
 * one key on a later turn of the event loop.
 */
export abstract class StoreController {
  protected readonly queue: MicroQueue;
  private readonly unsubscribe: () => void;

  constructor(protected readonly svc: ObjectService) {
    this.queue = new MicroQueue((key) => this.sync(key));
    this.unsubscribe = svc.store.onChange((change) => this.observe(change));
  }

  protected abstract observe(change: StoreChange): void;

  protected abstract sync(key: string): void;

  /** A built-in resource (always registered). */
  protected builtin(group: string, plural: string): ResourceType {
    return this.svc.registry.all().find((rt) => rt.group === group && rt.plural === plural)!;
  }

  stop(): void {
    this.unsubscribe();
    this.queue.stop();
  }
}
