import { randomUUID } from 'node:crypto';

/**
 * BullMQ job ids of the queue. Every add gets a fresh id: BullMQ ignores an add whose id exists,
 * which would drop the add that keepLastIfActive stores while the key runs. The key is part of
 * the id, so a list of job ids (BullMQ's wait and active lists) reads as a list of keys.
 */
export type JobKind = 'run' | 'timer';

/** BullMQ refuses ':' in custom ids; '%' is escaped too so that decoding is exact. */
const escapeKey = (key: string): string => key.replaceAll('%', '%25').replaceAll(':', '%3A');
const unescapeKey = (key: string): string => key.replaceAll('%3A', ':').replaceAll('%25', '%');

export class JobIds {
  private readonly process = randomUUID().slice(0, 8);
  private seq = 0;

  next(kind: JobKind, key: string): string {
    this.seq += 1;
    return `${kind}|${escapeKey(key)}|${this.process}.${this.seq.toString(36)}`;
  }
}

/** The kind and key of a job id made by JobIds; undefined for any other id. */
export function parseJobId(id: string): { kind: JobKind; key: string } | undefined {
  const first = id.indexOf('|');
  const last = id.lastIndexOf('|');
  const kind = id.slice(0, first);
  if (first < 0 || last <= first || (kind !== 'run' && kind !== 'timer')) return undefined;
  return { kind, key: unescapeKey(id.slice(first + 1, last)) };
}

/** BullMQ deduplication ids: one pending run and one pending timer per key. */
export const dedupId = (kind: JobKind, key: string): string =>
  kind === 'run' ? key : `timer|${key}`;
