import { createHash } from 'node:crypto';

/** What a scrape gets: 200 to serve, 401 without a valid token, 403 without the permission. */
export type ScrapeDecision = 200 | 401 | 403;

/**
 * Creates a review (POST of its body to `path`) and answers the object the API server returns:
 * the process's own REST client, so that authorizing scrapes loads none of client-node's
 * generated API classes and models.
 */
export type CreateReview = <T>(path: string, body: object) => Promise<T>;

interface ReviewStatus<S> {
  readonly status?: S;
}

interface UserInfo {
  readonly username?: string;
  readonly uid?: string;
  readonly groups?: string[];
  readonly extra?: Record<string, string[]>;
}

export interface MetricsAuthOptions {
  /** How long an answer for one token is reused, as the API server's own delegated auth does. */
  readonly ttlMs?: number;
  readonly maxEntries?: number;
}

/**
 * Kubernetes' delegated authentication and authorization for /metrics, as Kubebuilder's
 * scaffolding sets it up: the bearer token is checked with a TokenReview, and the user it names
 * must be allowed `get` on the non-resource URL /metrics (a SubjectAccessReview), which the
 * chart's metrics-reader ClusterRole grants to its Prometheus ServiceAccount.
 */
export class MetricsAuthorizer {
  private readonly answers = new Map<string, { decision: ScrapeDecision; expires: number }>();
  private readonly ttlMs: number;
  private readonly maxEntries: number;

  constructor(
    private readonly create: CreateReview,
    options: MetricsAuthOptions = {},
  ) {
    this.ttlMs = options.ttlMs ?? 10_000;
    this.maxEntries = options.maxEntries ?? 1000;
  }

  async decide(authorization: string | undefined): Promise<ScrapeDecision> {
    const token = /^Bearer\s+(\S+)$/i.exec(authorization ?? '')?.[1];
    if (!token) return 401;
    // Only a digest of the token is kept in memory.
    const key = createHash('sha256').update(token).digest('hex');
    const cached = this.answers.get(key);
    if (cached && cached.expires > Date.now()) return cached.decision;
    const decision = await this.review(token);
    this.answers.set(key, { decision, expires: Date.now() + this.ttlMs });
    if (this.answers.size > this.maxEntries) {
      this.answers.delete(this.answers.keys().next().value as string);
    }
    return decision;
  }

  private async review(token: string): Promise<ScrapeDecision> {
    const review = await this.create<ReviewStatus<{ authenticated?: boolean; user?: UserInfo }>>(
      '/apis/authentication.k8s.io/v1/tokenreviews',
      { apiVersion: 'authentication.k8s.io/v1', kind: 'TokenReview', spec: { token } },
    );
    const user = review.status?.user;
    if (!review.status?.authenticated || !user?.username) return 401;
    const access = await this.create<ReviewStatus<{ allowed?: boolean }>>(
      '/apis/authorization.k8s.io/v1/subjectaccessreviews',
      {
        apiVersion: 'authorization.k8s.io/v1',
        kind: 'SubjectAccessReview',
        spec: {
          user: user.username,
          groups: user.groups,
          uid: user.uid,
          extra: user.extra,
          nonResourceAttributes: { path: '/metrics', verb: 'get' },
        },
      },
    );
    return access.status?.allowed ? 200 : 403;
  }
}
