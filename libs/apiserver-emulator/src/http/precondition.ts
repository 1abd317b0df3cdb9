import type { RequestInfo } from '../types.js';

/** What guarded a write against newer state: a resourceVersion, a uid, or nothing. */
export type Precondition = 'resourceVersion' | 'uid' | 'none';

interface WriteBody {
  metadata?: { resourceVersion?: unknown };
  preconditions?: { uid?: unknown; resourceVersion?: unknown };
}

/**
 * The precondition an update, patch or delete carried, as the API server would honour it: a
 * `metadata.resourceVersion` in an update or a merge/strategic/apply patch, a JSON patch `test` of
 * `/metadata/resourceVersion`, or a delete's `preconditions`. Undefined for other verbs.
 */
export function preconditionOf(
  info: RequestInfo,
  body: Buffer,
  contentType: string | undefined,
): Precondition | undefined {
  if (!['update', 'patch', 'delete'].includes(info.verb)) return undefined;
  let parsed: unknown;
  try {
    parsed = body.length > 0 ? JSON.parse(body.toString('utf8')) : undefined;
  } catch {
    return 'none';
  }
  if (info.verb === 'delete') {
    const pre = (parsed as WriteBody | undefined)?.preconditions;
    if (pre?.uid) return 'uid';
    return pre?.resourceVersion ? 'resourceVersion' : 'none';
  }
  if (contentType?.startsWith('application/json-patch+json')) {
    const ops = Array.isArray(parsed) ? (parsed as { op?: string; path?: string }[]) : [];
    return ops.some((op) => op.op === 'test' && op.path === '/metadata/resourceVersion')
      ? 'resourceVersion'
      : 'none';
  }
  return (parsed as WriteBody | undefined)?.metadata?.resourceVersion ? 'resourceVersion' : 'none';
}
