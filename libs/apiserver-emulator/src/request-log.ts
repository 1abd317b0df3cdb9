import type { FaultMatch } from './faults.js';
import type { Precondition } from './http/precondition.js';
import type { RequestInfo } from './types.js';

export interface RequestRecord {
  seq: number;
  /** When the answer was sent, in epoch ms with a fraction; `time - durationMs` is the arrival. */
  time: number;
  method: string;
  path: string;
  query: string;
  verb: string;
  group: string;
  version: string;
  resource: string;
  subresource: string;
  namespace: string;
  name: string;
  user: string;
  userAgent: string;
  fieldManager: string;
  code: number;
  durationMs: number;
  /** Set when an injected fault answered the request. */
  fault?: string;
  /** For updates, patches and deletes: what guarded the write (see preconditionOf). */
  precondition?: Precondition;
}

/** Which requests to count: the fault match fields plus the answer. */
export interface RequestFilter extends FaultMatch {
  code?: number;
  fieldManager?: string;
  /** Only requests after this sequence number (see `mark()`). */
  since?: number;
}

function matches(r: RequestRecord, f: RequestFilter): boolean {
  if (
    f.verb !== undefined &&
    !(Array.isArray(f.verb) ? f.verb.includes(r.verb) : f.verb === r.verb)
  )
    return false;
  if (f.since !== undefined && r.seq <= f.since) return false;
  for (const k of [
    'group',
    'resource',
    'subresource',
    'namespace',
    'name',
    'user',
    'code',
    'fieldManager',
  ] as const) {
    if (f[k] !== undefined && f[k] !== r[k]) return false;
  }
  return true;
}

/**
 * Every request the emulator answered, with counters per verb/resource/user that are exact even
 * after the bounded record list has dropped old entries.
 */
export class RequestLog {
  private records: RequestRecord[] = [];
  private seq = 0;
  private readonly counters = new Map<
    string,
    {
      key: Omit<
        RequestRecord,
        | 'seq'
        | 'time'
        | 'method'
        | 'path'
        | 'query'
        | 'userAgent'
        | 'durationMs'
        | 'fault'
        | 'precondition'
      >;
      n: number;
    }
  >();

  constructor(private readonly capacity: number) {}

  nextSeq(): number {
    return ++this.seq;
  }

  add(
    info: RequestInfo,
    r: Omit<
      RequestRecord,
      'verb' | 'group' | 'version' | 'resource' | 'subresource' | 'namespace' | 'name'
    >,
  ): void {
    const rec: RequestRecord = {
      ...r,
      verb: info.verb,
      group: info.apiGroup,
      version: info.apiVersion,
      resource: info.resource,
      subresource: info.subresource,
      namespace: info.namespace,
      name: info.name,
    };
    this.records.push(rec);
    if (this.records.length > this.capacity * 2) this.records = this.records.slice(-this.capacity);
    const key = {
      verb: rec.verb,
      group: rec.group,
      version: rec.version,
      resource: info.isResourceRequest ? rec.resource : rec.path,
      subresource: rec.subresource,
      namespace: rec.namespace,
      name: '',
      user: rec.user,
      fieldManager: rec.fieldManager,
      code: rec.code,
    };
    const id = `${key.verb}\u0000${key.group}\u0000${key.version}\u0000${key.resource}\u0000${key.subresource}\u0000${key.namespace}\u0000${key.user}\u0000${key.fieldManager}\u0000${key.code}`;
    const c = this.counters.get(id);
    if (c) c.n++;
    else this.counters.set(id, { key, n: 1 });
  }

  /** The current sequence number; pass it as `since` to count only later requests. */
  mark(): number {
    return this.seq;
  }

  entries(filter: RequestFilter = {}): RequestRecord[] {
    return this.records.slice(-this.capacity).filter((r) => matches(r, filter));
  }

  /** Exact count over the whole lifetime (or since a mark, from the bounded records). */
  count(filter: RequestFilter = {}): number {
    if (filter.since !== undefined || filter.name !== undefined) return this.entries(filter).length;
    let n = 0;
    for (const { key, n: c } of this.counters.values())
      if (matches({ ...key, seq: 1 } as RequestRecord, filter)) n += c;
    return n;
  }

  /** Counts keyed `verb group/resource[/subresource] user`. */
  summary(): Record<string, number> {
    const out: Record<string, number> = {};
    for (const { key, n } of this.counters.values()) {
      const res = `${key.group ? `${key.group}/` : ''}${key.resource}${key.subresource ? `/${key.subresource}` : ''}`;
      const id = `${key.verb} ${res} ${key.user}`;
      out[id] = (out[id] ?? 0) + n;
    }
    return out;
  }

  reset(): void {
    this.records = [];
    this.counters.clear();
  }
}
