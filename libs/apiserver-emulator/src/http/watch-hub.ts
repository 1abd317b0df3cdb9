import type { WatchStream } from './watch-stream.js';

/** Which open watches a watch fault applies to. */
export interface WatchMatch {
  group?: string;
  resource?: string;
  namespace?: string;
  user?: string;
}

/** Every open watch, so faults can drop, stall or expire them. */
export class WatchHub {
  readonly open = new Set<WatchStream>();
  /** What happens to the next new watches that match: an ERROR 410 at once, or a dropped connection. */
  private next: { action: NextWatchFault; match: WatchMatch | undefined; remaining: number }[] = [];

  private select(match: WatchMatch | undefined): WatchStream[] {
    return [...this.open].filter(
      (w) =>
        !match ||
        ((match.group === undefined || match.group === w.rt.group) &&
          (match.resource === undefined || match.resource === w.rt.plural) &&
          (match.namespace === undefined || match.namespace === w.namespace) &&
          (match.user === undefined || match.user === w.user)),
    );
  }

  count(match?: WatchMatch): number {
    return this.select(match).length;
  }

  /** Ends matching watches cleanly (clients re-watch from their last resourceVersion). */
  close(match?: WatchMatch): number {
    const ws = this.select(match);
    for (const w of ws) w.close();
    return ws.length;
  }

  /** Kills matching watch connections abruptly. */
  drop(match?: WatchMatch): number {
    const ws = this.select(match);
    for (const w of ws) w.drop();
    return ws.length;
  }

  /** Keeps matching watches open but sends nothing more on them. */
  stall(match?: WatchMatch): number {
    const ws = this.select(match);
    for (const w of ws) w.stalled = true;
    return ws.length;
  }

  /** Ends matching watches with an in-stream ERROR 410 Expired (clients must relist). */
  expire(match?: WatchMatch, message = 'too old resource version'): number {
    const ws = this.select(match);
    for (const w of ws) w.fail(410, 'Expired', message);
    return ws.length;
  }

  /** The next `count` watch requests matching get ERROR 410 at once. */
  expireNextWatches(count: number, match?: WatchMatch): void {
    this.next.push({ action: 'expire', match, remaining: count });
  }

  /** The next `count` watch requests matching are accepted, then their connection is dropped. */
  dropNextWatches(count: number, match?: WatchMatch): void {
    this.next.push({ action: 'drop', match, remaining: count });
  }

  /** The fault, if any, a new watch meets (consumes one of its rule's count). */
  takeNext(w: {
    group: string;
    resource: string;
    namespace: string;
    user: string;
  }): NextWatchFault | undefined {
    for (const e of this.next) {
      const m = e.match;
      if (e.remaining <= 0) continue;
      if (
        m &&
        ((m.group !== undefined && m.group !== w.group) ||
          (m.resource !== undefined && m.resource !== w.resource) ||
          (m.namespace !== undefined && m.namespace !== w.namespace) ||
          (m.user !== undefined && m.user !== w.user))
      )
        continue;
      e.remaining--;
      this.next = this.next.filter((x) => x.remaining > 0);
      return e.action;
    }
    return undefined;
  }
}

export type NextWatchFault = 'expire' | 'drop';
