import { WatchCache, type EventType, type WatchEvent } from './watch-cache.js';
import type { KubeObject } from './types.js';

export interface Stored {
  obj: KubeObject;
  json: string;
  rv: number;
}

export interface StoreChange {
  storageKey: string;
  event: WatchEvent;
}

type ChangeListener = (change: StoreChange) => void;

class Bucket {
  readonly byNamespace = new Map<string, Map<string, Stored>>();
  size = 0;
  /** Sorted `namespace/name` keys per namespace ('' = all), rebuilt after creates and deletes only. */
  sorted = new Map<string, string[]>();
  constructor(readonly cache: WatchCache) {}
}

/**
 * The in-memory "etcd": objects by storage key, namespace and name, one global
 * resourceVersion counter, and per-storage watch history. Stored objects are never mutated
 * after a write; readers that modify must clone.
 */
export class Store {
  private rv: number;
  private readonly buckets = new Map<string, Bucket>();
  private readonly listeners = new Set<ChangeListener>();
  /** owner uid → dependents, for the garbage collector. */
  readonly dependents = new Map<string, Set<string>>();
  /** uid → storage reference (`storageKey\0namespace\0name`). */
  readonly byUid = new Map<string, string>();

  /** The serialisation of every object version still referenced somewhere (responses reuse it). */
  private readonly serialised = new WeakMap<KubeObject, string>();

  constructor(
    private readonly watchCacheSize: number,
    startRv = 1000,
  ) {
    this.rv = startRv;
  }

  get resourceVersion(): number {
    return this.rv;
  }

  /** Reserves the next resourceVersion without storing anything (bookmarks, compaction). */
  bump(): number {
    return ++this.rv;
  }

  bucket(storageKey: string): Bucket {
    let b = this.buckets.get(storageKey);
    if (!b) {
      b = new Bucket(new WatchCache(this.watchCacheSize));
      b.cache.compact(this.compactedRv);
      this.buckets.set(storageKey, b);
    }
    return b;
  }

  storageKeys(): string[] {
    return [...this.buckets.keys()];
  }

  /** JSON of a stored object version, if this object is one. */
  jsonOf(obj: KubeObject): string | undefined {
    return this.serialised.get(obj);
  }

  get(storageKey: string, namespace: string, name: string): Stored | undefined {
    return this.buckets.get(storageKey)?.byNamespace.get(namespace)?.get(name);
  }

  *list(storageKey: string, namespace?: string): Iterable<Stored> {
    const b = this.buckets.get(storageKey);
    if (!b) return;
    if (namespace !== undefined && namespace !== '') {
      const ns = b.byNamespace.get(namespace);
      if (ns) yield* ns.values();
      return;
    }
    for (const ns of b.byNamespace.values()) yield* ns.values();
  }

  /** Keys `namespace/name` in order, for paging (api-concepts: lists are ordered by key). */
  sortedKeys(storageKey: string, namespace?: string): string[] {
    const b = this.buckets.get(storageKey);
    if (!b) return [];
    const cacheKey = namespace ?? '';
    let keys = b.sorted.get(cacheKey);
    if (!keys) {
      keys = [...this.list(storageKey, namespace)]
        .map((s) => `${s.obj.metadata.namespace ?? ''}/${s.obj.metadata.name}`)
        .sort();
      b.sorted.set(cacheKey, keys);
    }
    return keys;
  }

  count(storageKey: string, namespace?: string): number {
    const b = this.buckets.get(storageKey);
    if (!b) return 0;
    if (namespace) return b.byNamespace.get(namespace)?.size ?? 0;
    return b.size;
  }

  /** Writes obj (assigning its resourceVersion) and notifies watchers. */
  put(storageKey: string, obj: KubeObject, type: EventType): Stored {
    const b = this.bucket(storageKey);
    const ns = obj.metadata.namespace ?? '';
    const name = obj.metadata.name!;
    let nsMap = b.byNamespace.get(ns);
    if (!nsMap) {
      nsMap = new Map();
      b.byNamespace.set(ns, nsMap);
    }
    const prev = nsMap.get(name);
    const rv = ++this.rv;
    obj.metadata.resourceVersion = String(rv);
    const stored: Stored = { obj, json: JSON.stringify(obj), rv };
    this.serialised.set(obj, stored.json);
    if (!prev) {
      b.size++;
      b.sorted.clear();
      if (obj.metadata.uid)
        this.byUid.set(obj.metadata.uid, `${storageKey}\u0000${ns}\u0000${name}`);
    }
    nsMap.set(name, stored);
    this.indexOwners(storageKey, prev?.obj, obj);
    this.emit(storageKey, b, { type, rv, obj, json: stored.json, prev: prev?.obj });
    return stored;
  }

  /** Removes an object; the DELETED event carries a fresh resourceVersion like etcd's delete. */
  remove(storageKey: string, namespace: string, name: string): Stored | undefined {
    const b = this.buckets.get(storageKey);
    const nsMap = b?.byNamespace.get(namespace);
    const prev = nsMap?.get(name);
    if (!b || !nsMap || !prev) return undefined;
    nsMap.delete(name);
    if (nsMap.size === 0) b.byNamespace.delete(namespace);
    b.size--;
    b.sorted.clear();
    if (prev.obj.metadata.uid) this.byUid.delete(prev.obj.metadata.uid);
    const rv = ++this.rv;
    const obj: KubeObject = {
      ...prev.obj,
      metadata: { ...prev.obj.metadata, resourceVersion: String(rv) },
    };
    const stored: Stored = { obj, json: JSON.stringify(obj), rv };
    this.serialised.set(obj, stored.json);
    this.indexOwners(storageKey, prev.obj, undefined);
    this.emit(storageKey, b, { type: 'DELETED', rv, obj, json: stored.json, prev: prev.obj });
    return stored;
  }

  /** Removes every object of a storage (a deleted CRD takes its objects with it), with DELETED events. */
  drop(storageKey: string): void {
    for (const s of [...this.list(storageKey)])
      this.remove(storageKey, s.obj.metadata.namespace ?? '', s.obj.metadata.name!);
  }

  /** Lists and watches older than this resourceVersion get 410 Expired. */
  compactedRv = 0;

  compact(rv: number): void {
    this.compactedRv = Math.max(this.compactedRv, rv);
    for (const b of this.buckets.values()) b.cache.compact(rv);
  }

  onChange(listener: ChangeListener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  private emit(storageKey: string, b: Bucket, event: WatchEvent): void {
    b.cache.push(event);
    for (const l of this.listeners) l({ storageKey, event });
  }

  private indexOwners(
    storageKey: string,
    before: KubeObject | undefined,
    after: KubeObject | undefined,
  ): void {
    const ref = (o: KubeObject) =>
      `${storageKey}\u0000${o.metadata.namespace ?? ''}\u0000${o.metadata.name}`;
    for (const r of before?.metadata.ownerReferences ?? []) {
      const set = this.dependents.get(r.uid);
      set?.delete(ref(before!));
      if (set?.size === 0) this.dependents.delete(r.uid);
    }
    for (const r of after?.metadata.ownerReferences ?? []) {
      let set = this.dependents.get(r.uid);
      if (!set) {
        set = new Set();
        this.dependents.set(r.uid, set);
      }
      set.add(ref(after!));
    }
  }
}

export function parseDependentRef(ref: string): {
  storageKey: string;
  namespace: string;
  name: string;
} {
  const [storageKey, namespace, name] = ref.split('\u0000') as [string, string, string];
  return { storageKey, namespace, name };
}
