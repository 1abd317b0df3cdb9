import type { ReconcilerConfig } from './config.js';
import { imageAllowed } from './images.js';
import type { GrantedResource, ObjectReference } from './references.js';
import type { EffectiveSpec } from './spec.js';

/**
 * Whether the namespace lets the operator hand one named object to a backup pod. The controller
 * learns it by asking the API server whether the operator's own identity may `get` that object
 * (a SelfSubjectAccessReview): only someone allowed to get it can grant that, so the grant is the
 * namespace owner's opt-in. The operator never reads the object itself.
 */
export interface Grant extends ObjectReference {
  readonly allowed: boolean;
}

export type RefusalReason = 'ImageNotAllowed' | 'SecretNotAllowed' | 'ClaimNotAllowed';

export interface Refusal {
  readonly reason: RefusalReason;
  readonly message: string;
}

const LABELS: Readonly<Record<GrantedResource, { kind: string; reason: RefusalReason }>> = {
  secrets: { kind: 'Secret', reason: 'SecretNotAllowed' },
  persistentvolumeclaims: { kind: 'PersistentVolumeClaim', reason: 'ClaimNotAllowed' },
};

function granted(grants: readonly Grant[], ref: ObjectReference): boolean {
  return grants.some((g) => g.resource === ref.resource && g.name === ref.name && g.allowed);
}

/**
 * Every reason the operator refuses to make a pod for this spec, image first. The operator
 * creates pods with powers the BackupJob's author may lack, so it runs only images its own
 * configuration trusts and mounts only the Secret and claim the namespace opted in. A reference
 * with no answer in `grants` counts as not opted in.
 */
export function podRefusals(
  spec: EffectiveSpec,
  namespace: string,
  config: ReconcilerConfig,
  grants: readonly Grant[],
): Refusal[] {
  const refusals: Refusal[] = [];
  if (!imageAllowed(spec.image, config.defaultImage, config.allowedImages)) {
    refusals.push({
      reason: 'ImageNotAllowed',
      message: `image "${spec.image}" is not in the operator's list of allowed backup images`,
    });
  }
  for (const ref of spec.references) {
    if (granted(grants, ref)) continue;
    const { kind, reason } = LABELS[ref.resource];
    refusals.push({
      reason,
      message:
        `${kind} "${ref.name}" is not opted in for backups: grant the operator's worker ` +
        `ServiceAccount "get" on ${ref.resource}/${ref.name} in namespace ${namespace} (docs/security.md)`,
    });
  }
  return refusals;
}

/** The Secrets and claims a backup pod may mount now: those opted in, and the default claim. */
export interface PermittedMounts {
  readonly secrets: ReadonlySet<string>;
  readonly claims: ReadonlySet<string>;
}

export function permittedMounts(spec: EffectiveSpec, grants: readonly Grant[]): PermittedMounts {
  const allowed = (resource: GrantedResource) =>
    new Set(grants.filter((g) => g.resource === resource && g.allowed).map((g) => g.name));
  const claims = allowed('persistentvolumeclaims');
  const namesClaim = spec.references.some((r) => r.resource === 'persistentvolumeclaims');
  if (!namesClaim) claims.add(spec.claimName);
  return { secrets: allowed('secrets'), claims };
}

/**
 * Whether the backup pod uses something the operator lends only while it is allowed: an
 * opted-in Secret or claim, or an image other than the operator's own.
 */
export function borrows(spec: EffectiveSpec, config: ReconcilerConfig): boolean {
  return spec.references.length > 0 || spec.image !== config.defaultImage;
}

/**
 * How long until an opted-in reference is asked about again: a withdrawn grant makes no event
 * the watcher sees, so only looking again notices it. A fixed per-object share of up to a tenth
 * is taken off, so objects that started together drift apart instead of falling due at once,
 * and no object waits longer than `grantRecheckMs`.
 */
export function grantRecheckDelay(uid: string, config: ReconcilerConfig): number {
  let hash = 0x811c9dc5;
  for (let i = 0; i < uid.length; i++) hash = Math.imul(hash ^ uid.charCodeAt(i), 0x01000193);
  const spread = Math.floor(config.grantRecheckMs / 10);
  return config.grantRecheckMs - (spread > 0 ? (hash >>> 0) % spread : 0);
}
