import { isApiError, type RestClient } from './rest.js';
import { collectionPath, LEASES, objectPath } from './resource.js';

/** client-go's LeaderElectionRecord: what the Lease's spec says about who leads. */
export interface LeaderElectionRecord {
  /** Empty when nobody holds the lease (never acquired, or released). */
  readonly holderIdentity: string;
  readonly leaseDurationSeconds: number;
  readonly acquireTime?: string;
  readonly renewTime?: string;
  readonly leaderTransitions: number;
}

export interface Lease {
  readonly apiVersion?: string;
  readonly kind?: string;
  readonly metadata: {
    readonly name?: string;
    readonly namespace?: string;
    readonly uid?: string;
    readonly resourceVersion?: string;
  };
  readonly spec?: {
    readonly holderIdentity?: string | null;
    readonly leaseDurationSeconds?: number | null;
    readonly acquireTime?: string | null;
    readonly renewTime?: string | null;
    readonly leaseTransitions?: number | null;
  };
}

export function recordOf(lease: Lease, defaultDurationSeconds: number): LeaderElectionRecord {
  const spec = lease.spec ?? {};
  return {
    holderIdentity: spec.holderIdentity ?? '',
    leaseDurationSeconds: spec.leaseDurationSeconds ?? defaultDurationSeconds,
    acquireTime: spec.acquireTime ?? undefined,
    renewTime: spec.renewTime ?? undefined,
    leaderTransitions: spec.leaseTransitions ?? 0,
  };
}

/** metav1.MicroTime's wire form: RFC 3339 with exactly six fraction digits, as the server parses it. */
export function microTime(date: Date): string {
  return date.toISOString().replace(/\.(\d{3})Z$/, '.$1000Z');
}

function specOf(record: LeaderElectionRecord): NonNullable<Lease['spec']> {
  return {
    holderIdentity: record.holderIdentity,
    leaseDurationSeconds: record.leaseDurationSeconds,
    acquireTime: record.acquireTime ?? null,
    renewTime: record.renewTime ?? null,
    leaseTransitions: record.leaderTransitions,
  };
}

/** Bounds of one Lease request. */
export interface CallOptions {
  readonly timeoutMs: number;
  readonly signal?: AbortSignal;
}

/**
 * A coordination.k8s.io/v1 Lease as the lock (client-go's LeaseLock). Every write is an update
 * carrying the resourceVersion that was read, so of two racing candidates one gets 409 Conflict.
 */
export class LeaseLock {
  constructor(
    private readonly rest: RestClient,
    readonly namespace: string,
    readonly name: string,
  ) {}

  /** The Lease, or undefined when it does not exist yet. */
  async get(call: CallOptions): Promise<Lease | undefined> {
    try {
      return await this.rest.request<Lease>({ path: this.path(), ...call });
    } catch (err) {
      if (isApiError(err, 404)) return undefined;
      throw err;
    }
  }

  create(record: LeaderElectionRecord, call: CallOptions): Promise<Lease> {
    return this.rest.request<Lease>({
      method: 'POST',
      path: collectionPath(LEASES, this.namespace),
      body: {
        apiVersion: 'coordination.k8s.io/v1',
        kind: 'Lease',
        metadata: { name: this.name, namespace: this.namespace },
        spec: specOf(record),
      },
      ...call,
    });
  }

  update(current: Lease, record: LeaderElectionRecord, call: CallOptions): Promise<Lease> {
    return this.rest.request<Lease>({
      method: 'PUT',
      path: this.path(),
      body: {
        apiVersion: 'coordination.k8s.io/v1',
        kind: 'Lease',
        metadata: { ...current.metadata, name: this.name, namespace: this.namespace },
        spec: specOf(record),
      },
      ...call,
    });
  }

  describe(): string {
    return `${this.namespace}/${this.name}`;
  }

  private path(): string {
    return objectPath(LEASES, this.namespace, this.name);
  }
}
