import { Backoff, defaultBackoff, sleep, type BackoffOptions } from './backoff.js';
import { errorFields, silentLog, type Log } from './log.js';
import { isApiError, KubeApiError, type RestClient } from './rest.js';
import {
  collectionPath,
  describe,
  METADATA_LIST_ACCEPT,
  METADATA_WATCH_ACCEPT,
  type ResourceType,
} from './resource.js';
import type { KubeList, KubeObject } from './types.js';

/**
 * What a list-watch reports (kube-rs' watcher::Event): a (re)list is `init`, one `initApply` per
 * listed object and `initDone`; afterwards each watch event is an `apply` or a `delete`.
 */
export type WatchEvent<T> =
  | { readonly type: 'init' }
  | { readonly type: 'initApply'; readonly object: T }
  | { readonly type: 'initDone' }
  | { readonly type: 'apply'; readonly object: T }
  | { readonly type: 'delete'; readonly object: T };

export interface ListWatchOptions<T extends KubeObject> {
  readonly rest: RestClient;
  readonly resource: ResourceType;
  /** One namespace; empty or undefined → all namespaces. */
  readonly namespace?: string;
  readonly labelSelector?: string;
  /** Ask for PartialObjectMetadata (client-go's metadata informer); plain JSON if unsupported. */
  readonly metadataOnly?: boolean;
  /** Applied to every object before it is reported, to keep only what the cache needs. */
  readonly transform?: (obj: KubeObject) => T;
  /** List page size (limit/continue). */
  readonly pageSize?: number;
  /**
   * A watch that delivers no line (event or bookmark) for this long is taken as dead and
   * replaced. The API server sends a bookmark about every minute to watches that ask for them.
   */
  readonly watchdogMs?: number;
  /** Server-side watch timeout; default random in [5, 10) minutes like client-go's reflector. */
  readonly watchTimeoutSeconds?: () => number;
  readonly listTimeoutMs?: number;
  readonly backoff?: BackoffOptions;
  readonly log?: Log;
}

const listWatchDefaults = {
  pageSize: 500,
  watchdogMs: 90_000,
  listTimeoutMs: 60_000,
};

type WatchOutcome = 'closed' | 'gone' | 'stalled' | 'stopped';

interface WatchLine {
  readonly type?: string;
  readonly object?: KubeObject & {
    readonly code?: number;
    readonly reason?: string;
    readonly message?: string;
  };
}

/**
 * client-go's reflector loop, which never gives up: list (paged), then watch from the list's
 * resourceVersion with bookmarks; a watch that ends is resumed from the last resourceVersion
 * seen; 410 Gone (in the stream or as the HTTP status) relists; every other failure (HTTP
 * errors, resets, stalled watches caught by the watchdog) backs off and retries. A Retry-After
 * from the server (429, 503) is the delay, as client-go's REST client honours it; the backoff
 * starts over after a healthy period: a list that worked, a watch that delivered a line or stayed
 * open for the longest delay, or no failure for a while (see Backoff).
 */
export class ListWatch<T extends KubeObject = KubeObject> {
  private resourceVersion: string | undefined;
  private isHealthy = false;
  private hasSynced = false;
  private readonly backoff: Backoff;
  private readonly healthyAfterMs: number;
  private readonly log: Log;
  private readonly path: string;

  constructor(private readonly options: ListWatchOptions<T>) {
    this.backoff = new Backoff(options.backoff);
    this.healthyAfterMs = options.backoff?.maxMs ?? defaultBackoff.maxMs;
    this.log = options.log ?? silentLog;
    this.path = collectionPath(options.resource, options.namespace);
  }

  /** The first list has completed. */
  get synced(): boolean {
    return this.hasSynced;
  }

  /** The last list or watch attempt worked and no stall has been detected since. */
  get healthy(): boolean {
    return this.isHealthy;
  }

  /** Lists and watches until `signal` aborts; never rejects. */
  async run(signal: AbortSignal, emit: (event: WatchEvent<T>) => void): Promise<void> {
    let needList = true;
    while (!signal.aborted) {
      try {
        if (needList) {
          await this.list(signal, emit);
          needList = false;
        }
        const outcome = await this.watch(signal, emit);
        if (outcome === 'gone') {
          needList = true;
          await this.retryLater(signal, 'watch expired (410 Gone), relisting');
        } else if (outcome === 'stalled') {
          this.log.warn('watch went silent, restarting it', this.fields());
        }
      } catch (err) {
        if (signal.aborted) break;
        if (isApiError(err, 410)) needList = true;
        await this.retryLater(signal, needList ? 'list failed' : 'watch failed', err);
      }
    }
    this.isHealthy = false;
  }

  private async retryLater(signal: AbortSignal, msg: string, err?: unknown): Promise<void> {
    this.isHealthy = false;
    const asked = isApiError(err) ? err.retryAfterMs : undefined;
    const delayMs = Math.round(
      asked === undefined ? this.backoff.next() : this.backoff.after(asked),
    );
    this.log.warn(msg, { ...this.fields(), retryInMs: delayMs, ...(err ? errorFields(err) : {}) });
    await sleep(delayMs, signal);
  }

  private async list(signal: AbortSignal, emit: (event: WatchEvent<T>) => void): Promise<void> {
    const { rest, labelSelector, metadataOnly } = this.options;
    const pageSize = this.options.pageSize ?? listWatchDefaults.pageSize;
    const items: T[] = [];
    let continueToken: string | undefined;
    let resourceVersion: string | undefined;
    do {
      const page: KubeList<KubeObject> = await rest.request<KubeList<KubeObject>>({
        path: this.path,
        query: { limit: pageSize, continue: continueToken, labelSelector },
        accept: metadataOnly ? METADATA_LIST_ACCEPT : 'application/json',
        timeoutMs: this.options.listTimeoutMs ?? listWatchDefaults.listTimeoutMs,
        signal,
      });
      for (const item of page.items ?? []) items.push(this.transform(item));
      continueToken = page.metadata?.continue || undefined;
      resourceVersion = page.metadata?.resourceVersion;
    } while (continueToken);
    // Reported only once complete, so a list that fails half-way leaves the cache as it was.
    emit({ type: 'init' });
    for (const object of items) emit({ type: 'initApply', object });
    emit({ type: 'initDone' });
    this.resourceVersion = resourceVersion;
    this.hasSynced = true;
    this.isHealthy = true;
    this.backoff.reset();
    this.log.debug('listed', { ...this.fields(), count: items.length });
  }

  private async watch(
    signal: AbortSignal,
    emit: (e: WatchEvent<T>) => void,
  ): Promise<WatchOutcome> {
    const controller = new AbortController();
    const stop = () => controller.abort();
    signal.addEventListener('abort', stop, { once: true });
    const watchdog = new Watchdog(this.options.watchdogMs ?? listWatchDefaults.watchdogMs, stop);
    const started = performance.now();
    let openedAt: number | undefined;
    let lines = 0;
    try {
      const body = await this.options.rest.stream({
        path: this.path,
        query: {
          watch: true,
          resourceVersion: this.resourceVersion,
          allowWatchBookmarks: true,
          timeoutSeconds: this.watchTimeoutSeconds(),
          labelSelector: this.options.labelSelector,
        },
        accept: this.options.metadataOnly ? METADATA_WATCH_ACCEPT : 'application/json',
        signal: controller.signal,
      });
      this.isHealthy = true;
      openedAt = performance.now();
      for await (const line of readLines(body)) {
        watchdog.reset();
        if (lines++ === 0) this.backoff.reset();
        if (this.handle(line, emit) === 'gone') return 'gone';
      }
      // A server that closes watches at once, again and again, must not be hammered.
      if (lines === 0 && performance.now() - started < 1000) {
        throw new Error('watch closed at once without any event');
      }
      return 'closed';
    } catch (err) {
      if (signal.aborted) return 'stopped';
      if (watchdog.fired) return 'stalled';
      throw err;
    } finally {
      // Open as long as the longest delay, it proved the server healthy even without a line (a
      // quiet watch): however it ended, the next failure is a first one again.
      if (openedAt !== undefined && performance.now() - openedAt >= this.healthyAfterMs) {
        this.backoff.reset();
      }
      watchdog.stop();
      signal.removeEventListener('abort', stop);
      controller.abort();
    }
  }

  /** Applies one watch line; 'gone' when the server says our resourceVersion is too old. */
  private handle(line: string, emit: (e: WatchEvent<T>) => void): 'gone' | undefined {
    let event: WatchLine;
    try {
      event = JSON.parse(line) as WatchLine;
    } catch {
      this.log.warn('unparsable watch line skipped', {
        ...this.fields(),
        line: line.slice(0, 200),
      });
      return undefined;
    }
    const object = event.object;
    if (!object) return undefined;
    switch (event.type) {
      case 'ADDED':
      case 'MODIFIED':
        this.advance(object);
        emit({ type: 'apply', object: this.transform(object) });
        return undefined;
      case 'DELETED':
        this.advance(object);
        emit({ type: 'delete', object: this.transform(object) });
        return undefined;
      case 'BOOKMARK':
        this.advance(object);
        return undefined;
      case 'ERROR':
        if (object.code === 410 || object.reason === 'Expired' || object.reason === 'Gone') {
          return 'gone';
        }
        throw new KubeApiError(object.code ?? 500, object.reason, object.message ?? 'watch error');
      default:
        return undefined;
    }
  }

  private advance(object: KubeObject): void {
    const rv = object.metadata?.resourceVersion;
    if (rv) this.resourceVersion = rv;
  }

  private transform(object: KubeObject): T {
    return this.options.transform ? this.options.transform(object) : (object as T);
  }

  private watchTimeoutSeconds(): number {
    return this.options.watchTimeoutSeconds?.() ?? Math.floor(300 * (1 + Math.random()));
  }

  private fields(): Record<string, unknown> {
    return {
      resource: describe(this.options.resource),
      namespace: this.options.namespace || '(all)',
      resourceVersion: this.resourceVersion,
    };
  }
}

/** Calls `onSilence` when reset() has not been called for `ms`. */
class Watchdog {
  fired = false;
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly ms: number,
    private readonly onSilence: () => void,
  ) {
    this.reset();
  }

  reset(): void {
    clearTimeout(this.timer);
    this.timer = setTimeout(() => {
      this.fired = true;
      this.onSilence();
    }, this.ms);
  }

  stop(): void {
    clearTimeout(this.timer);
  }
}

/** The stream's newline-delimited lines (a watch sends one JSON object per line). */
async function* readLines(body: ReadableStream<Uint8Array>): AsyncGenerator<string> {
  let pending = '';
  for await (const chunk of body.pipeThrough(new TextDecoderStream())) {
    pending += chunk;
    let newline = pending.indexOf('\n');
    while (newline >= 0) {
      const line = pending.slice(0, newline).trim();
      pending = pending.slice(newline + 1);
      if (line) yield line;
      newline = pending.indexOf('\n');
    }
  }
  if (pending.trim()) yield pending.trim();
}
