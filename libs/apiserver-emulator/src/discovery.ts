import { createHash } from 'node:crypto';
import type { Registry } from './registry.js';
import type { ResourceType } from './resource-type.js';

/**
 * Discovery documents (docs/concepts/overview/kubernetes-api/#discovery-api): the legacy
 * APIVersions/APIGroupList/APIResourceList and the aggregated APIGroupDiscoveryList (v2 and
 * v2beta1, negotiated by Accept). Rebuilt only when the registry changes.
 */
export const AGGREGATED_V2 = 'application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList';
export const AGGREGATED_V2BETA1 =
  'application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList';

/** Media-type parameters of each Accept entry, e.g. {type, g, v, as}. */
export function acceptEntries(accept: string | undefined): Record<string, string>[] {
  if (!accept) return [];
  return accept.split(',').map((entry) => {
    const [type, ...params] = entry.split(';').map((p) => p.trim());
    const out: Record<string, string> = { type: type ?? '' };
    for (const p of params) {
      const [k, v] = p.split('=');
      if (k && v !== undefined) out[k] = v;
    }
    return out;
  });
}

export function negotiateAggregated(accept: string | undefined): 'v2' | 'v2beta1' | undefined {
  const entries = acceptEntries(accept).filter(
    (e) => e.as === 'APIGroupDiscoveryList' && e.g === 'apidiscovery.k8s.io',
  );
  if (entries.some((e) => e.v === 'v2')) return 'v2';
  if (entries.some((e) => e.v === 'v2beta1')) return 'v2beta1';
  return undefined;
}

function storageVersionHash(rt: ResourceType): string {
  return createHash('sha256')
    .update(`${rt.group}/${rt.version}/${rt.kind}`)
    .digest('base64')
    .slice(0, 11);
}

function legacyResources(rts: ResourceType[]): unknown[] {
  const out: unknown[] = [];
  for (const rt of rts) {
    const entry: Record<string, unknown> = {
      name: rt.plural,
      singularName: rt.singular,
      namespaced: rt.namespaced,
      kind: rt.kind,
      verbs: rt.verbs,
    };
    if (rt.shortNames.length) entry.shortNames = rt.shortNames;
    if (rt.categories.length) entry.categories = rt.categories;
    if (!rt.virtual) entry.storageVersionHash = storageVersionHash(rt);
    out.push(entry);
    if (rt.statusSubresource)
      out.push({
        name: `${rt.plural}/status`,
        singularName: '',
        namespaced: rt.namespaced,
        kind: rt.kind,
        verbs: ['get', 'patch', 'update'],
      });
    for (const sub of rt.extraSubresources ?? []) {
      const e: Record<string, unknown> = {
        name: `${rt.plural}/${sub.name}`,
        singularName: '',
        namespaced: rt.namespaced,
        kind: sub.kind,
        verbs: sub.verbs,
      };
      if (sub.group) e.group = sub.group;
      if (sub.version) e.version = sub.version;
      out.push(e);
    }
  }
  return out;
}

function aggregatedResource(rt: ResourceType): Record<string, unknown> {
  const responseKind = { group: rt.group, version: rt.version, kind: rt.kind };
  const subresources: unknown[] = [];
  if (rt.statusSubresource)
    subresources.push({ subresource: 'status', responseKind, verbs: ['get', 'patch', 'update'] });
  for (const sub of rt.extraSubresources ?? []) {
    subresources.push({
      subresource: sub.name,
      responseKind: {
        group: sub.group ?? rt.group,
        version: sub.version ?? rt.version,
        kind: sub.kind,
      },
      verbs: sub.verbs,
    });
  }
  const r: Record<string, unknown> = {
    resource: rt.plural,
    responseKind,
    scope: rt.namespaced ? 'Namespaced' : 'Cluster',
    singularResource: rt.singular,
    verbs: rt.verbs,
  };
  if (rt.shortNames.length) r.shortNames = rt.shortNames;
  if (rt.categories.length) r.categories = rt.categories;
  if (subresources.length) r.subresources = subresources;
  return r;
}

export class Discovery {
  private cachedAt = -1;
  private cache = new Map<string, string>();

  constructor(
    private readonly registry: Registry,
    private readonly serverAddress: () => string,
  ) {}

  private cached(key: string, build: () => unknown): string {
    if (this.cachedAt !== this.registry.generation) {
      this.cache = new Map();
      this.cachedAt = this.registry.generation;
    }
    let v = this.cache.get(key);
    if (v === undefined) {
      v = JSON.stringify(build());
      this.cache.set(key, v);
    }
    return v;
  }

  apiVersions(): string {
    return this.cached('api', () => ({
      kind: 'APIVersions',
      versions: ['v1'],
      serverAddressByClientCIDRs: [
        { clientCIDR: '0.0.0.0/0', serverAddress: this.serverAddress() },
      ],
    }));
  }

  private groupEntry(name: string, versions: string[]): Record<string, unknown> {
    const gvs = versions.map((version) => ({ groupVersion: `${name}/${version}`, version }));
    return { name, versions: gvs, preferredVersion: gvs[0] };
  }

  apiGroupList(): string {
    return this.cached('apis', () => ({
      kind: 'APIGroupList',
      apiVersion: 'v1',
      groups: this.registry
        .groups()
        .filter((g) => g.name !== '')
        .map((g) => this.groupEntry(g.name, g.versions)),
    }));
  }

  apiGroup(group: string): string | undefined {
    const g = this.registry.groups().find((x) => x.name === group && group !== '');
    if (!g) return undefined;
    return this.cached(`group:${group}`, () => ({
      kind: 'APIGroup',
      apiVersion: 'v1',
      ...this.groupEntry(g.name, g.versions),
    }));
  }

  resourceList(group: string, version: string): string | undefined {
    const rts = this.registry.inGroupVersion(group, version);
    if (rts.length === 0) return undefined;
    const groupVersion = group ? `${group}/${version}` : version;
    return this.cached(`gv:${groupVersion}`, () => ({
      kind: 'APIResourceList',
      apiVersion: 'v1',
      groupVersion,
      resources: legacyResources(rts),
    }));
  }

  /** `/api` (legacy=true) or `/apis` as an APIGroupDiscoveryList. */
  aggregated(legacy: boolean, version: 'v2' | 'v2beta1'): string {
    return this.cached(`agg:${legacy}:${version}`, () => ({
      kind: 'APIGroupDiscoveryList',
      apiVersion: `apidiscovery.k8s.io/${version}`,
      metadata: {},
      items: this.registry
        .groups()
        .filter((g) => (g.name === '') === legacy)
        .map((g) => ({
          metadata: legacy ? { creationTimestamp: null } : { name: g.name },
          versions: g.versions.map((v) => ({
            version: v,
            resources: this.registry.inGroupVersion(g.name, v).map(aggregatedResource),
            freshness: 'Current',
          })),
        })),
    }));
  }
}
