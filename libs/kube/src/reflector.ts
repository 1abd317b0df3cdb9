import { objectKey, type KubeObject } from './types.js';
import type { WatchEvent } from './list-watch.js';

/** A change to the cache, as informer event handlers see it. */
export type Delta<T> =
  | { readonly type: 'added'; readonly object: T; readonly isInInitialList: boolean }
  | { readonly type: 'updated'; readonly old: T; readonly object: T }
  | { readonly type: 'deleted'; readonly object: T };

/**
 * Keeps a cache (`namespace/name` → object) in step with a watcher's events and turns them into
 * deltas. A relist replaces the cache wholesale: objects that vanished while the watch was down
 * come out as deletions, and objects listed again come out as updates (old and new with the same
 * resourceVersion when nothing changed), so handlers see every object again after a 410, as with
 * client-go's Replace.
 */
export class Reflector<T extends KubeObject> {
  private store = new Map<string, T>();
  private relist: Map<string, T> | undefined;
  private hasSynced = false;

  get synced(): boolean {
    return this.hasSynced;
  }

  get size(): number {
    return this.store.size;
  }

  get(key: string): T | undefined {
    return this.store.get(key);
  }

  values(): IterableIterator<T> {
    return this.store.values();
  }

  keys(): IterableIterator<string> {
    return this.store.keys();
  }

  apply(event: WatchEvent<T>, emit: (delta: Delta<T>) => void): void {
    switch (event.type) {
      case 'init':
        this.relist = new Map();
        return;
      case 'initApply':
        this.relist?.set(objectKey(event.object), event.object);
        return;
      case 'initDone':
        this.replace(emit);
        return;
      case 'apply':
        this.upsert(event.object, emit);
        return;
      case 'delete':
        this.remove(event.object, emit);
        return;
    }
  }

  private replace(emit: (delta: Delta<T>) => void): void {
    const listed = this.relist ?? new Map<string, T>();
    const previous = this.store;
    const initial = !this.hasSynced;
    this.relist = undefined;
    this.store = listed;
    this.hasSynced = true;
    for (const [key, object] of previous) {
      if (!listed.has(key)) emit({ type: 'deleted', object });
    }
    for (const [key, object] of listed) {
      const old = previous.get(key);
      if (old) emit({ type: 'updated', old, object });
      else emit({ type: 'added', object, isInInitialList: initial });
    }
  }

  private upsert(object: T, emit: (delta: Delta<T>) => void): void {
    const key = objectKey(object);
    const old = this.store.get(key);
    this.store.set(key, object);
    if (old) emit({ type: 'updated', old, object });
    else emit({ type: 'added', object, isInInitialList: false });
  }

  private remove(object: T, emit: (delta: Delta<T>) => void): void {
    // The DELETED event carries the object's final state, newer than the cached one.
    this.store.delete(objectKey(object));
    emit({ type: 'deleted', object });
  }
}
