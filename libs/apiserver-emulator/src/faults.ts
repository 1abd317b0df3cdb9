import { ApiError } from './errors.js';
import type { RequestInfo } from './types.js';

/** Which requests a fault applies to; every field given must match. */
export interface FaultMatch {
  verb?: string | string[];
  group?: string;
  resource?: string;
  subresource?: string;
  namespace?: string;
  name?: string;
  user?: string;
}

export interface LatencyFault {
  match?: FaultMatch;
  fixedMs: number;
  jitterMs?: number;
}

export interface ErrorFault {
  match?: FaultMatch;
  /** HTTP status: 500, 503, 429, 410 (watch: in-stream ERROR 410) or any other. */
  code: number;
  /** Answer this fraction of matching requests (0..1); with `count`, at most that many. */
  rate?: number;
  /** Answer only the next N matching requests. */
  count?: number;
  retryAfterSeconds?: number;
  message?: string;
}

interface Rule<T> {
  id: number;
  rule: T;
  remaining: number;
}

const REASONS: Record<number, string> = {
  400: 'BadRequest',
  403: 'Forbidden',
  404: 'NotFound',
  409: 'Conflict',
  410: 'Expired',
  422: 'Invalid',
  429: 'TooManyRequests',
  500: 'InternalError',
  503: 'ServiceUnavailable',
  504: 'Timeout',
};

function faultMatches(m: FaultMatch | undefined, info: RequestInfo, user: string): boolean {
  if (!m) return true;
  if (
    m.verb !== undefined &&
    !(Array.isArray(m.verb) ? m.verb.includes(info.verb) : m.verb === info.verb)
  )
    return false;
  if (m.group !== undefined && m.group !== info.apiGroup) return false;
  if (m.resource !== undefined && m.resource !== info.resource) return false;
  if (m.subresource !== undefined && m.subresource !== info.subresource) return false;
  if (m.namespace !== undefined && m.namespace !== info.namespace) return false;
  if (m.name !== undefined && m.name !== info.name) return false;
  if (m.user !== undefined && m.user !== user) return false;
  return true;
}

/** Injected latency and error responses, decided per request before it reaches the handlers. */
export class Faults {
  private nextId = 1;
  private latency: Rule<LatencyFault>[] = [];
  private errors: Rule<ErrorFault>[] = [];

  constructor(private readonly random: () => number = Math.random) {}

  addLatency(rule: LatencyFault): number {
    const id = this.nextId++;
    this.latency.push({ id, rule, remaining: Infinity });
    return id;
  }

  addError(rule: ErrorFault): number {
    const id = this.nextId++;
    this.errors.push({ id, rule, remaining: rule.count ?? Infinity });
    return id;
  }

  remove(id: number): void {
    this.latency = this.latency.filter((r) => r.id !== id);
    this.errors = this.errors.filter((r) => r.id !== id);
  }

  clear(): void {
    this.latency = [];
    this.errors = [];
  }

  latencyFor(info: RequestInfo, user: string): number {
    let ms = 0;
    for (const { rule } of this.latency) {
      if (faultMatches(rule.match, info, user))
        ms += rule.fixedMs + (rule.jitterMs ? this.random() * rule.jitterMs : 0);
    }
    return ms;
  }

  /** The injected error for this request, if any (consumes one of a rule's `count`). */
  errorFor(info: RequestInfo, user: string): ErrorFault | undefined {
    for (const r of this.errors) {
      if (r.remaining <= 0 || !faultMatches(r.rule.match, info, user)) continue;
      if (r.rule.rate !== undefined && this.random() >= r.rule.rate) continue;
      r.remaining--;
      if (r.remaining <= 0) this.errors = this.errors.filter((x) => x !== r);
      return r.rule;
    }
    return undefined;
  }
}

export function faultError(rule: ErrorFault): ApiError {
  const reason = REASONS[rule.code] ?? 'InternalError';
  const headers: Record<string, string> = {};
  const details: { retryAfterSeconds?: number } = {};
  if (rule.retryAfterSeconds !== undefined || rule.code === 429) {
    const s = rule.retryAfterSeconds ?? 1;
    headers['Retry-After'] = String(s);
    details.retryAfterSeconds = s;
  }
  const message =
    rule.message ??
    (rule.code === 429
      ? 'Too many requests, please try again later.'
      : `injected fault (${rule.code})`);
  return new ApiError(rule.code, reason, message, details, headers);
}
