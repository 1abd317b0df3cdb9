import type { ReconcilerConfig } from './config.js';
import { imageAllowed } from './images.js';
import type { EffectiveSpec } from './spec.js';

/**
 * Whether the namespace lets the operator hand a Secret to a backup pod: the controller learns it
 * by asking the API server whether the operator's own identity may get that Secret, which only
 * someone allowed to read the Secret can grant. The operator never reads the Secret itself.
 */
export interface SecretAccess {
  readonly name: string;
  readonly allowed: boolean;
}

export interface Refusal {
  readonly reason: 'ImageNotAllowed' | 'SecretNotAllowed';
  readonly message: string;
}

/**
 * Why the operator refuses to make a pod for this spec, if it does. The operator creates pods
 * with powers the BackupJob's author may lack, so it only runs images the operator's own
 * configuration trusts and mounts only Secrets their namespace opted in.
 */
export function podRefusal(
  spec: EffectiveSpec,
  namespace: string,
  config: ReconcilerConfig,
  secretAccess: SecretAccess | undefined,
): Refusal | undefined {
  if (!imageAllowed(spec.image, config.defaultImage, config.allowedImages)) {
    return {
      reason: 'ImageNotAllowed',
      message: `image "${spec.image}" is not in the operator's list of allowed backup images`,
    };
  }
  const secret = spec.secretName;
  if (secret !== undefined && !(secretAccess?.name === secret && secretAccess.allowed)) {
    return {
      reason: 'SecretNotAllowed',
      message:
        `Secret "${secret}" is not opted in for backups: grant the operator's worker ` +
        `ServiceAccount "get" on secrets/${secret} in namespace ${namespace} (docs/security.md)`,
    };
  }
  return undefined;
}
