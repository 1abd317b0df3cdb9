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

export const DEFAULT_CHECK_TIMEOUT_MS = 1000;

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
 * Readiness from the shared ioredis connection: down at once while it is reconnecting (rather
 * than queueing a ping that would only time out), otherwise a PING must answer.
 */
export function redisPingCheck(redis: PingableRedis, name = 'redis'): HealthCheck {
  return {
    name,
    async check() {
      if (redis.status !== 'ready') throw new Error(`redis connection is ${redis.status}`);
      await redis.ping();
    },
  };
}
