import { badRequest, expired } from '../errors.js';
import type { ObjectService } from '../objects.js';
import { apiVersionOf, type ResourceType } from '../resource-type.js';
import type { Stored } from '../store.js';
import type { ObjectFilter } from './filter.js';
import { validateListOptions } from './query.js';

export interface ListPage {
  items: Stored[];
  resourceVersion: string;
  continue?: string;
  remainingItemCount?: number;
}

interface ContinueToken {
  rv: number;
  start: string;
}

function keyOf(s: Stored): string {
  return `${s.obj.metadata.namespace ?? ''}/${s.obj.metadata.name}`;
}

function decodeContinue(token: string, compactedRv: number): ContinueToken {
  let parsed: ContinueToken;
  try {
    parsed = JSON.parse(Buffer.from(token, 'base64url').toString('utf8')) as ContinueToken;
  } catch {
    throw badRequest(
      'continue key is not valid: incorrect encoded start resourceVersion (version meta.k8s.io/v1)',
    );
  }
  if (parsed.rv < compactedRv) {
    throw expired(
      'The provided continue parameter is too old to display a consistent list result. You can start a new list without the continue parameter, or use the continue token in this response to retrieve the remainder of the results. Continuing with the provided token results in an inconsistent list - objects that were created, modified, or deleted between the time the first chunk was returned and now may show up in the list.',
    );
  }
  return parsed;
}

/**
 * A list with selectors and limit/continue paging (api-concepts #retrieving-large-results-sets-in-chunks).
 * Pages are ordered by namespace/name; later pages show the current state, not the first page's.
 */
export function listPage(
  svc: ObjectService,
  rt: ResourceType,
  namespace: string,
  filter: ObjectFilter | undefined,
  query: URLSearchParams,
): ListPage {
  validateListOptions(query, false);
  const limit = Number(query.get('limit') ?? 0);
  const cont = query.get('continue');
  const exactRv =
    query.get('resourceVersionMatch') === 'Exact'
      ? Number(query.get('resourceVersion'))
      : undefined;
  // Only the newest state is kept, so an exact list can be served only at or after compaction.
  if (exactRv !== undefined && exactRv < svc.store.compactedRv)
    throw expired('The resourceVersion for the provided list is too old.');
  const token = cont ? decodeContinue(cont, svc.store.compactedRv) : undefined;
  const rv = token?.rv ?? svc.store.resourceVersion;
  const ns = rt.namespaced && namespace ? namespace : undefined;
  if (!(limit > 0) && !token) {
    const items: Stored[] = [];
    for (const s of svc.store.list(rt.storageKey, ns)) if (!filter || filter(s.obj)) items.push(s);
    return { items, resourceVersion: String(rv) };
  }
  const keys = svc.store.sortedKeys(rt.storageKey, ns);
  let i = token ? upperBound(keys, token.start) : 0;
  const items: Stored[] = [];
  for (; i < keys.length && (!(limit > 0) || items.length < limit); i++) {
    const key = keys[i]!;
    const slash = key.indexOf('/');
    const s = svc.store.get(rt.storageKey, key.slice(0, slash), key.slice(slash + 1));
    if (s && (!filter || filter(s.obj))) items.push(s);
  }
  const more = keys.slice(i).some((key) => {
    if (!filter) return true;
    const slash = key.indexOf('/');
    const s = svc.store.get(rt.storageKey, key.slice(0, slash), key.slice(slash + 1));
    return !!s && filter(s.obj);
  });
  if (!more || items.length === 0) return { items, resourceVersion: String(rv) };
  const next: ContinueToken = { rv, start: keyOf(items[items.length - 1]!) };
  const out: ListPage = {
    items,
    resourceVersion: String(rv),
    continue: Buffer.from(JSON.stringify(next)).toString('base64url'),
  };
  if (!filter) out.remainingItemCount = keys.length - i;
  return out;
}

function upperBound(keys: string[], start: string): number {
  let lo = 0;
  let hi = keys.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (keys[mid]! <= start) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

export function listMeta(page: ListPage): Record<string, unknown> {
  const meta: Record<string, unknown> = { resourceVersion: page.resourceVersion };
  if (page.continue) meta.continue = page.continue;
  if (page.remainingItemCount !== undefined) meta.remainingItemCount = page.remainingItemCount;
  return meta;
}

/** The List JSON, assembled from each object's cached serialisation. */
export function listJson(svc: ObjectService, rt: ResourceType, page: ListPage): string {
  const items = page.items.map((s) => svc.serveJson(rt, s)).join(',');
  return `{"kind":"${rt.kind}List","apiVersion":"${apiVersionOf(rt)}","metadata":${JSON.stringify(listMeta(page))},"items":[${items}]}`;
}
