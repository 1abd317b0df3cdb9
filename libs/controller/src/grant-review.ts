import type { Grant, ObjectReference } from '#reconciler';
import type { KubeClients } from './clients.js';

export interface GrantReviewOptions {
  /**
   * How long an answer is reused, so that a no-op reconcile asks nothing. A withdrawn grant is
   * noticed at most this long after the periodic re-check that asks again.
   */
  readonly ttlMs?: number;
  /** Answers remembered at most; the oldest go first. */
  readonly maxEntries?: number;
  readonly clock?: () => number;
}

const DEFAULT_GRANT_CACHE_TTL_MS = 30_000;

/**
 * Learns whether a namespace opted an object in for backups (a Secret, a PersistentVolumeClaim)
 * by asking the API server whether the worker's own identity may `get` it, with a
 * SelfSubjectAccessReview. The object itself is never read: the grant is the opt-in, and RBAC's
 * escalation rules let only someone who may get the object grant it. Answers are cached briefly,
 * in this process only.
 */
export class GrantReviewer {
  private readonly answers = new Map<string, { allowed: boolean; expires: number }>();
  private readonly ttlMs: number;
  private readonly maxEntries: number;
  private readonly clock: () => number;

  constructor(options: GrantReviewOptions = {}) {
    this.ttlMs = options.ttlMs ?? DEFAULT_GRANT_CACHE_TTL_MS;
    this.maxEntries = options.maxEntries ?? 10_000;
    this.clock = options.clock ?? Date.now;
  }

  async review(clients: KubeClients, namespace: string, ref: ObjectReference): Promise<Grant> {
    const { resource, name } = ref;
    const key = `${namespace}/${resource}/${name}`;
    const now = this.clock();
    const cached = this.answers.get(key);
    if (cached && cached.expires > now) return { resource, name, allowed: cached.allowed };
    const allowed = await clients.mayGet(namespace, resource, name);
    this.answers.delete(key);
    this.answers.set(key, { allowed, expires: now + this.ttlMs });
    if (this.answers.size > this.maxEntries) {
      this.answers.delete(this.answers.keys().next().value as string);
    }
    return { resource, name, allowed };
  }
}
