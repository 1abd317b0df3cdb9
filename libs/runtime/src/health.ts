import { Cluster, type Redis } from 'ioredis';

export type Probe = 'liveness' | 'readiness';
export type CheckDetails = Readonly<Record<string, unknown>>;

export interface HealthCheck {
  /** Key of the check in the /healthz or /readyz body, e.g. `redis`, `apiserver`, `informers`. */
  readonly name: string;
  /** Which endpoints run it; readiness only unless said otherwise. */
  readonly probes?: readonly Probe[];
  /** A check slower than this counts as failed (kubelet probes time out after 1 s by default). */
  readonly timeoutMs?: number;
  /**
   * Resolves, optionally with details shown in the body (e.g. `{ role: 'standby' }`), when healthy;
   * throws with the reason when not. `signal` aborts when the timeout passes.
   */
  check(signal: AbortSignal): Promise<CheckDetails | void> | CheckDetails | void;
}

const DEFAULT_CHECK_TIMEOUT_MS = 1000;

/**
 * Named liveness and readiness checks that components register as they start: the Redis ping,
 * API server reachable, informers synced, watch alive, leader or standby. The probe endpoints run
 * whatever is registered at the time of the request.
 */
export class HealthRegistry {
  private readonly registered = new Map<string, HealthCheck>();

  /** Adds a check; returns a function that removes it again. */
  register(check: HealthCheck): () => void {
    if (this.registered.has(check.name)) {
      throw new Error(`a health check named "${check.name}" is already registered`);
    }
    this.registered.set(check.name, check);
    return () => {
      if (this.registered.get(check.name) === check) this.registered.delete(check.name);
    };
  }

  checks(probe: Probe): HealthCheck[] {
    return [...this.registered.values()].filter((c) => (c.probes ?? ['readiness']).includes(probe));
  }
}

export interface PingableRedis {
  readonly status: string;
  ping(): Promise<unknown>;
}

/**
 * Readiness from the shared ioredis client: down at once while it is reconnecting (rather than
 * queueing a ping that would only time out), otherwise a PING must answer. A Sentinel-managed
 * primary is one connection that ioredis moves to the new primary after a failover. For a Cluster,
 * every hash slot must have a primary this process is connected to and every such primary must
 * answer: one dead primary makes the process not ready until its replica took over, because the
 * keys of its shards can be neither added nor run until then. The check reads the slot map again
 * when it finds a hole, so readiness returns with the promotion, not with the next periodic refresh.
 */
export function redisPingCheck(redis: PingableRedis | Cluster, name = 'redis'): HealthCheck {
  return {
    name,
    async check() {
      if (redis.status !== 'ready') throw new Error(`redis connection is ${redis.status}`);
      if (redis instanceof Cluster) return pingPrimaries(redis);
      await redis.ping();
    },
  };
}

async function pingPrimaries(cluster: Cluster): Promise<CheckDetails> {
  let primaries = servingPrimaries(cluster);
  if (typeof primaries === 'string') {
    // An idle client learns of a promoted replica only at its next periodic slot refresh, seconds
    // away; reading the slot map now lets the first probe after a failover see the new primary.
    await new Promise<void>((resolve) => cluster.refreshSlotsCache(() => resolve()));
    primaries = servingPrimaries(cluster);
    if (typeof primaries === 'string') throw new Error(primaries);
  }
  await Promise.all(
    primaries.map(([owner, node]) =>
      node.ping().catch((err: Error) => {
        throw new Error(`the Redis Cluster primary ${owner} does not answer: ${err.message}`);
      }),
    ),
  );
  return { primaries: primaries.length };
}

/**
 * The primary of every hash slot, as `host:port` with this client's connection to it, or why the
 * slot map has a hole: slots without a primary, or a primary this client lost.
 */
function servingPrimaries(cluster: Cluster): [string, Redis][] | string {
  const connected = new Map(
    cluster.nodes('master').map((node) => [`${node.options.host}:${node.options.port}`, node]),
  );
  const owners = new Set<string>();
  let uncovered = 0;
  for (let slot = 0; slot < CLUSTER_SLOTS; slot++) {
    const owner = cluster.slots[slot]?.[0];
    if (owner === undefined) uncovered++;
    else owners.add(owner);
  }
  if (uncovered > 0) return `${uncovered} hash slots of the Redis Cluster have no primary`;
  const primaries: [string, Redis][] = [];
  for (const owner of owners) {
    const node = connected.get(owner);
    if (node === undefined) return `the Redis Cluster primary ${owner} is gone`;
    primaries.push([owner, node]);
  }
  return primaries;
}

const CLUSTER_SLOTS = 16384;

/** What one run of a check gave: its details, or why it failed (a throw, or its timeout). */
export type CheckOutcome =
  | { readonly up: true; readonly details: CheckDetails; readonly responseTime: number }
  | { readonly up: false; readonly message: string; readonly responseTime: number };

/** Runs one check within its timeout; past it, the check is told to stop (its signal aborts). */
export async function runHealthCheck(check: HealthCheck): Promise<CheckOutcome> {
  const timeoutMs = check.timeoutMs ?? DEFAULT_CHECK_TIMEOUT_MS;
  const abort = new AbortController();
  let timer: NodeJS.Timeout | undefined;
  const timedOut = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      // Down first: a check that answers its abort must not count as up.
      reject(new Error(`timeout of ${timeoutMs}ms exceeded`));
      abort.abort();
    }, timeoutMs);
  });
  const started = Date.now();
  try {
    const details =
      (await Promise.race([Promise.resolve(check.check(abort.signal)), timedOut])) ?? {};
    return { up: true, details, responseTime: Date.now() - started };
  } catch (err) {
    const message = err instanceof Error ? err.message : String(err);
    return { up: false, message, responseTime: Date.now() - started };
  } finally {
    clearTimeout(timer);
  }
}
