import type { ServerResponse } from 'node:http';
import type { ObjectService } from '../objects.js';
import { apiVersionOf, type ResourceType } from '../resource-type.js';
import { columnDefinitions, tableRows, type PrinterColumn } from '../table.js';
import type { KubeObject } from '../types.js';
import type { EventType, WatchCache, WatchEvent, WatchSubscriber } from '../watch-cache.js';
import type { ObjectFilter } from './filter.js';

export type WatchFormat = 'json' | 'table';

export interface WatchStreamOptions {
  namespace: string;
  filter: ObjectFilter | undefined;
  format: WatchFormat;
  columns: PrinterColumn[];
  bookmarks: boolean;
  bookmarkIntervalMs: number;
  /** Unsent output beyond which the watch is cut off. */
  maxBufferedBytes: number;
  timeoutMs: number | undefined;
  user: string;
}

/**
 * One open watch: filters each event of its storage, turns selector transitions into
 * ADDED/DELETED (api-concepts #semantics-for-watch), and writes one JSON line per event.
 * Lines in the plain JSON form are cached on the event and shared by every watcher.
 */
export class WatchStream implements WatchSubscriber {
  stalled = false;
  private closed = false;
  private sentColumns = false;
  private lastRv: number;
  private readonly timers: NodeJS.Timeout[] = [];

  constructor(
    private readonly res: ServerResponse,
    readonly rt: ResourceType,
    private readonly cache: WatchCache,
    private readonly svc: ObjectService,
    private readonly opts: WatchStreamOptions,
    private readonly onClose: (w: WatchStream) => void,
    startRv: number,
  ) {
    this.lastRv = startRv;
    res.on('close', () => this.close());
  }

  get user(): string {
    return this.opts.user;
  }

  get namespace(): string {
    return this.opts.namespace;
  }

  /** Sends the initial/replayed events, then follows live changes. */
  begin(initial: WatchEvent[], initialEventsEnd: boolean): void {
    for (const e of initial) this.onEvent(e);
    if (initialEventsEnd) this.bookmark(true);
    this.cache.subscribers.add(this);
    if (this.opts.bookmarks) {
      const t = setInterval(() => this.bookmark(false), this.opts.bookmarkIntervalMs);
      t.unref();
      this.timers.push(t);
    }
    if (this.opts.timeoutMs !== undefined) {
      const t = setTimeout(() => {
        if (this.opts.bookmarks) this.bookmark(false);
        this.close();
      }, this.opts.timeoutMs);
      t.unref();
      this.timers.push(t);
    }
  }

  onEvent(event: WatchEvent): void {
    if (this.closed || this.stalled) return;
    const ns = this.opts.namespace;
    if (ns && (event.obj.metadata.namespace ?? '') !== ns) return;
    const type = this.typeFor(event);
    if (!type) return;
    this.lastRv = event.rv;
    if (this.opts.format === 'table') {
      this.send(this.tableLine(type, event.obj));
      return;
    }
    const key = `${type} ${apiVersionOf(this.rt)}`;
    let lines = event.lines;
    if (!lines) {
      lines = new Map();
      event.lines = lines;
    }
    let line = lines.get(key);
    if (line === undefined) {
      const json = this.svc.serveJson(this.rt, { obj: event.obj, json: event.json, rv: event.rv });
      line = `{"type":"${type}","object":${json}}\n`;
      lines.set(key, line);
    }
    this.send(line);
  }

  /**
   * Like the apiserver's cacher, a watcher that stops reading (a paused process) is cut off
   * instead of buffering without bound; its client re-watches or relists.
   */
  private send(line: string): void {
    this.res.write(line);
    if (this.res.writableLength > this.opts.maxBufferedBytes) this.drop();
  }

  private typeFor(event: WatchEvent): EventType | undefined {
    const f = this.opts.filter;
    if (!f) return event.type;
    if (event.type === 'DELETED') return f(event.prev ?? event.obj) ? 'DELETED' : undefined;
    const now = f(event.obj);
    if (event.type === 'ADDED') return now ? 'ADDED' : undefined;
    const before = event.prev ? f(event.prev) : false;
    if (now) return before ? 'MODIFIED' : 'ADDED';
    return before ? 'DELETED' : undefined;
  }

  private tableLine(type: string, obj: KubeObject): string {
    const served = this.svc.serve(this.rt, obj);
    const table = {
      kind: 'Table',
      apiVersion: 'meta.k8s.io/v1',
      metadata: { resourceVersion: obj.metadata.resourceVersion },
      columnDefinitions: this.sentColumns ? [] : columnDefinitions(this.opts.columns),
      rows: tableRows(this.opts.columns, [served], this.svc.clock.now(), 'Metadata'),
    };
    this.sentColumns = true;
    return `${JSON.stringify({ type, object: table })}\n`;
  }

  /** BOOKMARK with the newest resourceVersion (api-concepts #watch-bookmarks). */
  bookmark(initialEventsEnd: boolean): void {
    if (this.closed || this.stalled) return;
    const rv = Math.max(this.lastRv, this.svc.store.resourceVersion);
    const metadata: Record<string, unknown> = { resourceVersion: String(rv) };
    if (initialEventsEnd) metadata.annotations = { 'k8s.io/initial-events-end': 'true' };
    this.res.write(
      `${JSON.stringify({ type: 'BOOKMARK', object: { kind: this.rt.kind, apiVersion: apiVersionOf(this.rt), metadata } })}\n`,
    );
  }

  /** Ends the stream with an in-stream ERROR (HTTP status stays 200), like the watch cache does. */
  fail(code: number, reason: string, message: string): void {
    if (this.closed) return;
    this.res.write(
      `${JSON.stringify({ type: 'ERROR', object: { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message, reason, code } })}\n`,
    );
    this.close();
  }

  close(): void {
    if (this.detach()) this.res.end();
  }

  /** Drops the TCP connection without a clean end of the chunked stream. */
  drop(): void {
    if (this.detach()) this.res.destroy();
  }

  private detach(): boolean {
    if (this.closed) return false;
    this.closed = true;
    for (const t of this.timers) clearTimeout(t);
    this.cache.subscribers.delete(this);
    this.onClose(this);
    return true;
  }
}
