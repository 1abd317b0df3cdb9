import { errorFields, silentLog, type Log } from './log.js';
import { Reflector, type Delta } from './reflector.js';
import { describe } from './resource.js';
import type { KubeObject } from './types.js';
import { ListWatch, type ListWatchOptions } from './list-watch.js';

/** client-go's ResourceEventHandler, with controller-runtime's isInInitialList. */
export interface EventHandler<T> {
  onAdd?(obj: T, isInInitialList: boolean): void;
  /** Also called by resyncs and relists with an unchanged object: old.resourceVersion === obj's. */
  onUpdate?(old: T, obj: T): void;
  onDelete?(obj: T): void;
}

export interface InformerOptions<T extends KubeObject> extends Omit<
  ListWatchOptions<T>,
  'namespace'
> {
  /** Namespaces to watch, one watch each; empty or undefined → one watch over all namespaces. */
  readonly namespaces?: readonly string[];
  /** Every cached object is re-delivered as an update this often; 0 turns it off. */
  readonly resyncPeriodMs?: number;
}

/** controller-runtime's default SyncPeriod. */
const DEFAULT_RESYNC_PERIOD_MS = 10 * 60 * 60 * 1000;

/**
 * A shared informer: a list-watch and a reflector per watched namespace (or one for all), one cache
 * view over them, event handlers, and a periodic resync. Handlers run synchronously in the order
 * events arrive; one handler's exception is logged and does not stop the others or the watch.
 */
export class Informer<T extends KubeObject = KubeObject> {
  private readonly scopes: { listWatch: ListWatch<T>; reflector: Reflector<T> }[];
  private readonly handlers: EventHandler<T>[] = [];
  private readonly log: Log;
  private running:
    { controller: AbortController; done: Promise<unknown>; resync?: NodeJS.Timeout } | undefined;

  constructor(private readonly options: InformerOptions<T>) {
    this.log = options.log ?? silentLog;
    const namespaces = options.namespaces?.length ? options.namespaces : [''];
    this.scopes = namespaces.map((namespace) => ({
      listWatch: new ListWatch<T>({ ...options, namespace }),
      reflector: new Reflector<T>(),
    }));
  }

  get name(): string {
    return describe(this.options.resource);
  }

  addEventHandler(handler: EventHandler<T>): void {
    this.handlers.push(handler);
  }

  start(): void {
    if (this.running) return;
    const controller = new AbortController();
    const done = Promise.all(
      this.scopes.map(({ listWatch, reflector }) =>
        listWatch.run(controller.signal, (event) =>
          reflector.apply(event, (delta) => this.dispatch(delta)),
        ),
      ),
    );
    const period = this.options.resyncPeriodMs ?? DEFAULT_RESYNC_PERIOD_MS;
    const resync = period > 0 ? setInterval(() => this.resync(), period) : undefined;
    resync?.unref();
    this.running = { controller, done, resync };
  }

  /** Stops every watch; the cache keeps its last state. */
  async stop(): Promise<void> {
    const running = this.running;
    if (!running) return;
    this.running = undefined;
    clearInterval(running.resync);
    running.controller.abort();
    await running.done;
  }

  /** Every watched scope has completed its first list. */
  get synced(): boolean {
    return this.scopes.every((s) => s.reflector.synced);
  }

  /** Every watched scope's last list or watch attempt worked (see ListWatch.healthy). */
  get healthy(): boolean {
    return this.running !== undefined && this.scopes.every((s) => s.listWatch.healthy);
  }

  get(key: string): T | undefined {
    for (const { reflector } of this.scopes) {
      const found = reflector.get(key);
      if (found) return found;
    }
    return undefined;
  }

  *list(): IterableIterator<T> {
    for (const { reflector } of this.scopes) yield* reflector.values();
  }

  *keys(): IterableIterator<string> {
    for (const { reflector } of this.scopes) yield* reflector.keys();
  }

  get size(): number {
    return this.scopes.reduce((n, s) => n + s.reflector.size, 0);
  }

  /** Re-delivers every cached object as an unchanged update (client-go's resync). */
  resync(): void {
    this.log.info('resync', { informer: this.name, objects: this.size });
    for (const object of this.list()) this.dispatch({ type: 'updated', old: object, object });
  }

  private dispatch(delta: Delta<T>): void {
    for (const handler of this.handlers) {
      try {
        if (delta.type === 'added') handler.onAdd?.(delta.object, delta.isInInitialList);
        else if (delta.type === 'updated') handler.onUpdate?.(delta.old, delta.object);
        else handler.onDelete?.(delta.object);
      } catch (err) {
        this.log.error('informer event handler failed', {
          informer: this.name,
          ...errorFields(err),
        });
      }
    }
  }
}
