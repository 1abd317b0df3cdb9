import type { SecretAccess } from '#reconciler';
import type { KubeClients } from './clients.js';

export interface SecretAccessOptions {
  /** How long an answer is reused: a no-op reconcile then asks nothing. */
  readonly ttlMs?: number;
  /** Answers remembered at most; the oldest go first. */
  readonly maxEntries?: number;
  readonly clock?: () => number;
}

/**
 * Learns whether a namespace opted a Secret in for backups by asking the API server whether the
 * worker's own identity may `get` it (a SelfSubjectAccessReview). The Secret itself is never read:
 * the grant is the opt-in, and RBAC's escalation rules let only someone who may read the Secret
 * grant it. Answers are cached briefly, in this process only.
 */
export class SecretAccessReviewer {
  private readonly answers = new Map<string, { allowed: boolean; expires: number }>();
  private readonly ttlMs: number;
  private readonly maxEntries: number;
  private readonly clock: () => number;

  constructor(options: SecretAccessOptions = {}) {
    this.ttlMs = options.ttlMs ?? 30_000;
    this.maxEntries = options.maxEntries ?? 10_000;
    this.clock = options.clock ?? Date.now;
  }

  async review(clients: KubeClients, namespace: string, name: string): Promise<SecretAccess> {
    const key = `${namespace}/${name}`;
    const now = this.clock();
    const cached = this.answers.get(key);
    if (cached && cached.expires > now) return { name, allowed: cached.allowed };
    const answer = await clients.authorization.createSelfSubjectAccessReview(
      {
        body: {
          apiVersion: 'authorization.k8s.io/v1',
          kind: 'SelfSubjectAccessReview',
          spec: { resourceAttributes: { namespace, verb: 'get', resource: 'secrets', name } },
        },
      },
      clients.options(),
    );
    const allowed = answer.status?.allowed === true;
    this.answers.delete(key);
    this.answers.set(key, { allowed, expires: now + this.ttlMs });
    if (this.answers.size > this.maxEntries) {
      this.answers.delete(this.answers.keys().next().value as string);
    }
    return { name, allowed };
  }
}
