import { gvrKey, type ResourceType } from './resource-type.js';

/**
 * The set of served resources. CRDs add and remove entries at runtime, so discovery and
 * OpenAPI documents are rebuilt lazily from `generation`.
 */
export class Registry {
  private readonly byGvr = new Map<string, ResourceType>();
  /** Group → versions in preference order. */
  private readonly groupVersions = new Map<string, string[]>();
  generation = 0;

  add(rt: ResourceType, versionPriority = 0): void {
    this.byGvr.set(gvrKey(rt.group, rt.version, rt.plural), rt);
    const versions = this.groupVersions.get(rt.group) ?? [];
    if (!versions.includes(rt.version)) {
      versions.splice(Math.min(versionPriority, versions.length), 0, rt.version);
    }
    this.groupVersions.set(rt.group, versions);
    this.generation++;
  }

  remove(group: string, version: string, plural: string): void {
    this.byGvr.delete(gvrKey(group, version, plural));
    if (!this.all().some((rt) => rt.group === group && rt.version === version)) {
      const versions = (this.groupVersions.get(group) ?? []).filter((v) => v !== version);
      if (versions.length) this.groupVersions.set(group, versions);
      else this.groupVersions.delete(group);
    }
    this.generation++;
  }

  get(group: string, version: string, plural: string): ResourceType | undefined {
    return this.byGvr.get(gvrKey(group, version, plural));
  }

  all(): ResourceType[] {
    return [...this.byGvr.values()];
  }

  groups(): { name: string; versions: string[] }[] {
    return [...this.groupVersions].map(([name, versions]) => ({ name, versions }));
  }

  inGroupVersion(group: string, version: string): ResourceType[] {
    return this.all().filter((rt) => rt.group === group && rt.version === version);
  }

  byKind(apiVersion: string, kind: string): ResourceType | undefined {
    const [group, version] = apiVersion.includes('/') ? apiVersion.split('/') : ['', apiVersion];
    return this.all().find(
      (rt) => rt.group === group && rt.version === version && rt.kind === kind,
    );
  }

  /** The preferred served version of a storage, used by controllers and the programmatic API. */
  preferred(storageKey: string): ResourceType | undefined {
    const candidates = this.all().filter((rt) => rt.storageKey === storageKey);
    return candidates.sort((a, b) => this.versionRank(a) - this.versionRank(b))[0];
  }

  /** Every served resource of a storage (watchers of each are notified of a change). */
  servedBy(storageKey: string): ResourceType[] {
    return this.all().filter((rt) => rt.storageKey === storageKey);
  }

  private versionRank(rt: ResourceType): number {
    return (this.groupVersions.get(rt.group) ?? []).indexOf(rt.version);
  }
}
