import type { ResourceType } from '../resource-type.js';
import type { StoreChange } from '../store.js';
import type { KubeObject } from '../types.js';
import { clone, deepEqual, rfc3339 } from '../util.js';
import { controllerRef } from './owner-ref.js';
import { StoreController } from './queue.js';

const DEPLOYMENTS = 'apps/deployments';
const REPLICASETS = 'apps/replicasets';
const MANAGER = 'kube-controller-manager';
const HASH_LABEL = 'pod-template-hash';
const REVISION = 'deployment.kubernetes.io/revision';
const DESIRED = 'deployment.kubernetes.io/desired-replicas';
const MAX = 'deployment.kubernetes.io/max-replicas';
/** Deployment annotations the controller does not copy onto its ReplicaSets (deployment/util). */
const NOT_COPIED = new Set([
  'kubectl.kubernetes.io/last-applied-configuration',
  REVISION,
  'deployment.kubernetes.io/revision-history',
  DESIRED,
  MAX,
  'deprecated.deployment.rollback.to',
]);

interface Template {
  metadata?: { labels?: Record<string, string>; [k: string]: unknown };
  [k: string]: unknown;
}

interface DeploymentSpec {
  replicas?: number;
  paused?: boolean;
  revisionHistoryLimit?: number;
  selector?: { matchLabels?: Record<string, string>; matchExpressions?: unknown[] };
  template?: Template;
}

interface Condition {
  type: string;
  status: string;
  reason: string;
  message: string;
  lastUpdateTime?: string;
  lastTransitionTime: string;
}

/** fnv-1a 32 of the template, encoded with the alphabet of rand.SafeEncodeString, like ComputeHash. */
function templateHash(template: unknown): string {
  let h = 0x811c9dc5;
  for (const c of Buffer.from(JSON.stringify(normalised(template ?? {})))) {
    h ^= c;
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  const alphabet = 'bcdfghjklmnpqrstvwxz2456789';
  return String(h)
    .split('')
    .map((d) => alphabet[Number(d.charCodeAt(0)) % alphabet.length])
    .join('');
}

/**
 * The template as Go's semantic equality sees it: null, empty maps and empty lists are the same
 * as absent (a typed client echoes `creationTimestamp: null` and `resources: {}`).
 */
function normalised(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(normalised);
  if (value === null || typeof value !== 'object') return value;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value)) {
    const n = normalised(v);
    if (n === null || n === undefined) continue;
    if (typeof n === 'object' && Object.keys(n).length === 0) continue;
    out[k] = n;
  }
  return out;
}

function withoutHash(template: Template | undefined): Template {
  const t = normalised(template ?? {}) as Template;
  if (t.metadata?.labels) {
    delete t.metadata.labels[HASH_LABEL];
    if (Object.keys(t.metadata.labels).length === 0) delete t.metadata.labels;
  }
  return t;
}

function revisionOf(rs: KubeObject): number {
  return Number(rs.metadata.annotations?.[REVISION] ?? 0) || 0;
}

function replicasOf(obj: KubeObject): number {
  return (obj.spec as { replicas?: number } | undefined)?.replicas ?? 1;
}

/**
 * The Deployment and ReplicaSet controllers, without Pods: a ReplicaSet per pod template (named
 * `<deployment>-<hash>`, labelled pod-template-hash, annotated with its revision), the new one
 * scaled to spec.replicas and the old ones to 0, old ones beyond revisionHistoryLimit deleted.
 * The emulator runs no Pods, so every replica counts as ready and available the moment its
 * ReplicaSet asks for it: statuses show the state a cluster reaches once a rollout has finished.
 */
export class DeploymentController extends StoreController {
  protected observe({ storageKey, event }: StoreChange): void {
    const meta = event.obj.metadata;
    if (storageKey === DEPLOYMENTS && event.type !== 'DELETED')
      this.queue.add(`d/${meta.namespace}/${meta.name}`);
    if (storageKey !== REPLICASETS) return;
    const owner = meta.ownerReferences?.find((r) => r.controller && r.kind === 'Deployment');
    if (owner) this.queue.add(`d/${meta.namespace}/${owner.name}`);
    if (event.type !== 'DELETED') this.queue.add(`r/${meta.namespace}/${meta.name}`);
  }

  protected sync(key: string): void {
    const [kind, ns, name] = key.split('/') as [string, string, string];
    if (kind === 'r') this.syncReplicaSet(ns, name);
    else this.syncDeployment(ns, name);
  }

  private get deployments(): ResourceType {
    return this.builtin('apps', 'deployments');
  }

  private get replicaSets(): ResourceType {
    return this.builtin('apps', 'replicasets');
  }

  /** Every replica a ReplicaSet asks for is ready and available (no Pods run here). */
  private syncReplicaSet(ns: string, name: string): void {
    const rs = this.svc.find(this.replicaSets, ns, name)?.obj;
    if (!rs || rs.metadata.deletionTimestamp) return;
    const n = replicasOf(rs);
    const status: Record<string, unknown> = {
      replicas: n,
      fullyLabeledReplicas: n,
      readyReplicas: n,
      availableReplicas: n,
      observedGeneration: rs.metadata.generation,
    };
    for (const k of ['fullyLabeledReplicas', 'readyReplicas', 'availableReplicas'])
      if (n === 0) delete status[k];
    if (deepEqual(rs.status ?? {}, status)) return;
    this.writeStatus(this.replicaSets, rs, status);
  }

  private ownedReplicaSets(d: KubeObject): KubeObject[] {
    return [...this.svc.store.list(REPLICASETS, d.metadata.namespace)]
      .map((s) => s.obj)
      .filter((rs) =>
        rs.metadata.ownerReferences?.some((r) => r.controller && r.uid === d.metadata.uid),
      );
  }

  private syncDeployment(ns: string, name: string): void {
    const d = this.svc.find(this.deployments, ns, name)?.obj;
    if (!d || d.metadata.deletionTimestamp) return;
    const spec = (d.spec ?? {}) as DeploymentSpec;
    const owned = this.ownedReplicaSets(d);
    const maxRevision = Math.max(0, ...owned.map(revisionOf));
    let current = owned.find((rs) =>
      deepEqual(withoutHash((rs.spec as DeploymentSpec).template), withoutHash(spec.template)),
    );
    if (!current && !spec.paused) current = this.createReplicaSet(d, spec, maxRevision + 1);
    else if (current && revisionOf(current) < maxRevision && !spec.paused)
      current = this.updateReplicaSet(current, d, maxRevision + 1, replicasOf(d));
    else if (current && replicasOf(current) !== replicasOf(d))
      current = this.updateReplicaSet(current, d, revisionOf(current), replicasOf(d));
    if (!current) return;
    const old = owned.filter((rs) => rs.metadata.uid !== current.metadata.uid);
    for (const rs of old) if (replicasOf(rs) !== 0) this.updateReplicaSet(rs, d, revisionOf(rs), 0);
    this.pruneHistory(old, spec.revisionHistoryLimit ?? 10);
    const revision = String(revisionOf(current));
    if (d.metadata.annotations?.[REVISION] !== revision) {
      this.svc.patch(
        this.deployments,
        ns,
        name,
        'application/merge-patch+json',
        { metadata: { annotations: { [REVISION]: revision } } },
        { fieldManager: MANAGER },
      );
    }
    this.writeDeploymentStatus(this.svc.find(this.deployments, ns, name)!.obj, current);
  }

  private createReplicaSet(d: KubeObject, spec: DeploymentSpec, revision: number): KubeObject {
    const hash = templateHash(spec.template);
    const template = clone(spec.template ?? {});
    template.metadata = {
      ...template.metadata,
      labels: { ...template.metadata?.labels, [HASH_LABEL]: hash },
    };
    const selector = clone(spec.selector ?? {});
    selector.matchLabels = { ...selector.matchLabels, [HASH_LABEL]: hash };
    const rs: KubeObject = {
      apiVersion: 'apps/v1',
      kind: 'ReplicaSet',
      metadata: {
        name: `${d.metadata.name}-${hash}`,
        namespace: d.metadata.namespace,
        labels: { ...template.metadata.labels },
        annotations: this.annotations(d, revision),
        ownerReferences: [controllerRef(d)],
      },
      spec: { replicas: replicasOf(d), selector, template },
    };
    const r = this.svc.create(this.replicaSets, d.metadata.namespace!, rs, {
      fieldManager: MANAGER,
    });
    return r.obj;
  }

  private annotations(d: KubeObject, revision: number): Record<string, string> {
    const out: Record<string, string> = {};
    for (const [k, v] of Object.entries(d.metadata.annotations ?? {}))
      if (!NOT_COPIED.has(k)) out[k] = v;
    const n = String(replicasOf(d));
    return { ...out, [DESIRED]: n, [MAX]: n, [REVISION]: String(revision) };
  }

  private updateReplicaSet(
    rs: KubeObject,
    d: KubeObject,
    revision: number,
    replicas: number,
  ): KubeObject {
    const next = clone(rs);
    const revisionChanged = revision !== revisionOf(rs);
    next.metadata.annotations = revisionChanged
      ? this.annotations(d, revision)
      : { ...rs.metadata.annotations, [DESIRED]: String(replicasOf(d)) };
    (next.spec as { replicas: number }).replicas = replicas;
    return this.svc.update(this.replicaSets, rs.metadata.namespace!, rs.metadata.name!, next, {
      fieldManager: MANAGER,
    }).obj;
  }

  /** Old ReplicaSets scaled to zero beyond revisionHistoryLimit go, oldest revision first. */
  private pruneHistory(old: KubeObject[], limit: number): void {
    const idle = old.filter((rs) => replicasOf(rs) === 0 || rs.metadata.deletionTimestamp);
    idle.sort((a, b) => revisionOf(a) - revisionOf(b));
    for (const rs of idle.slice(0, Math.max(0, idle.length - limit)))
      this.svc.delete(this.replicaSets, rs.metadata.namespace!, rs.metadata.name!);
  }

  private writeDeploymentStatus(d: KubeObject, current: KubeObject): void {
    const n = replicasOf(d);
    const paused = (d.spec as DeploymentSpec).paused === true;
    const previous = ((d.status as { conditions?: Condition[] } | undefined)?.conditions ??
      []) as Condition[];
    const now = rfc3339(this.svc.clock.now());
    const condition = (type: string, reason: string, message: string): Condition => {
      const before = previous.find((c) => c.type === type);
      const same = before?.status === 'True' && before.reason === reason;
      return {
        type,
        status: 'True',
        lastUpdateTime: same ? before.lastUpdateTime! : now,
        lastTransitionTime: before?.status === 'True' ? before.lastTransitionTime : now,
        reason,
        message,
      };
    };
    const status: Record<string, unknown> = {
      observedGeneration: d.metadata.generation,
      replicas: n,
      updatedReplicas: n,
      readyReplicas: n,
      availableReplicas: n,
      conditions: [
        condition('Available', 'MinimumReplicasAvailable', 'Deployment has minimum availability.'),
        paused
          ? condition('Progressing', 'DeploymentPaused', 'Deployment is paused')
          : condition(
              'Progressing',
              'NewReplicaSetAvailable',
              `ReplicaSet "${current.metadata.name}" has successfully progressed.`,
            ),
      ],
    };
    if (n === 0) for (const k of ['readyReplicas', 'availableReplicas']) delete status[k];
    if (deepEqual(d.status ?? {}, status)) return;
    this.writeStatus(this.deployments, d, status);
  }

  private writeStatus(rt: ResourceType, obj: KubeObject, status: Record<string, unknown>): void {
    const next = clone(obj);
    next.status = status;
    this.svc.update(rt, obj.metadata.namespace!, obj.metadata.name!, next, {
      fieldManager: MANAGER,
      subresource: 'status',
    });
  }
}
