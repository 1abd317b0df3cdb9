/** How big each scenario runs. `default` fits 20 minutes on 2 cores; `quick` is a smoke run. */
export interface Size {
  readonly name: 'default' | 'quick';
  /** Mean injected API latency per request, ms. */
  readonly latencies: readonly number[];
  readonly coldStart: {
    readonly objects: readonly number[];
    readonly workers: readonly number[];
    /** Latencies the largest object count runs at (the others run at every latency). */
    readonly largeLatencies: readonly number[];
    /** Baseline concurrency candidates; the fastest is "the baseline at its best". */
    readonly baselineConcurrency: readonly number[];
    /** Cap of one run; a capped run reports its rate so far. */
    readonly capSeconds: number;
    /**
     * Cap of a run at the largest object count. Its rate is steady well before the end, so a
     * shorter cap measures the same rate and keeps the whole bench inside its time budget.
     */
    readonly largeCapSeconds: number;
    /**
     * Operator runs where the API round trip, not CPU, bounds every worker: a latency high enough
     * that even the largest worker count leaves cores idle on this machine.
     */
    readonly latencyBound: {
      readonly objects: number;
      readonly latencyMs: number;
      readonly workers: readonly number[];
    };
    /**
     * A small estate at a realistic latency, timed as a whole from spawn: where start-up weighs
     * most against the reconciling.
     */
    readonly small: {
      readonly objects: number;
      readonly latencyMs: number;
      readonly workers: readonly number[];
    };
  };
  readonly workerConcurrency: number;
  readonly shards: number;
  readonly burst: { readonly objects: number; readonly workers: number };
  readonly churn: {
    readonly objects: number;
    readonly rates: readonly number[];
    readonly seconds: number;
    readonly workers: number;
    readonly latencies: readonly number[];
  };
  readonly steady: {
    readonly objects: number;
    readonly workers: number;
    readonly latencies: readonly number[];
    /** Each system's resync period: longer than its first pass, which must end before. */
    readonly resyncPeriodSeconds: number;
  };
  readonly coalescing: { readonly updates: number; readonly windowMs: number };
  /** Spec changes at a slow pace, to count what one change costs. */
  readonly ownWrites: { readonly objects: number; readonly workers: number };
  /** New BackupJobs created one at a time into a warm system, each timed to Ready. */
  readonly latency: {
    readonly creates: number;
    readonly latencyMs: number;
    readonly workers: number;
  };
  /** Converged BackupJobs that use an opted-in Secret, looked at again every intervalSeconds. */
  readonly grantRecheck: {
    readonly objects: number;
    readonly workers: number;
    readonly intervalSeconds: number;
    readonly latencyMs: number;
  };
  readonly memory: { readonly objects: readonly number[] };
  /** BackupJobs, each with its CronJob and three Jobs, whose Redis footprint is measured. */
  readonly redisMemory: { readonly objects: readonly number[] };
  /** The same cold start and resync on one redis-server and on a 3-primary Redis Cluster. */
  readonly redisCluster: {
    readonly objects: number;
    readonly workers: number;
    readonly latencyMs: number;
  };
  readonly queueFloor: { readonly quick: boolean };
  /**
   * Start-up: `runs` times each system, spawned against one BackupJob at `latencyMs`: the
   * operator with `workers` workers, every run capped at `capSeconds`.
   */
  readonly startUp: {
    readonly runs: number;
    readonly latencyMs: number;
    readonly workers: number;
    readonly capSeconds: number;
  };
  /** A converged system left alone: `settleSeconds` after it went quiet, over `windowSeconds`. */
  readonly idle: {
    readonly objects: number;
    readonly workers: number;
    readonly latencyMs: number;
    readonly settleSeconds: number;
    readonly windowSeconds: number;
  };
  /**
   * A cold start of each of `objects` with each process in a memory cgroup: the workers at the
   * chart's limit, the watcher at the chart's and at the one the docs give for N.
   */
  readonly memoryLimit: {
    readonly objects: readonly number[];
    readonly workers: number;
    readonly latencyMs: number;
    readonly capSeconds: number;
  };
  /** The cold start profiled with --cpu-prof. */
  readonly profile: {
    readonly objects: number;
    readonly workers: number;
    readonly latencyMs: number;
  };
}

export const SIZES: Record<Size['name'], Size> = {
  default: {
    name: 'default',
    latencies: [0, 5, 20],
    coldStart: {
      objects: [1000, 10000],
      workers: [1, 2, 4, 8],
      largeLatencies: [5, 20],
      // The operator's total concurrencies (workers × 10), so both are compared over one range.
      baselineConcurrency: [10, 20, 40, 80],
      capSeconds: 90,
      largeCapSeconds: 45,
      latencyBound: { objects: 500, latencyMs: 100, workers: [1, 2, 4] },
      small: { objects: 400, latencyMs: 10, workers: [2, 4] },
    },
    workerConcurrency: 10,
    shards: 16,
    burst: { objects: 1000, workers: 4 },
    churn: { objects: 10000, rates: [50, 150, 300], seconds: 10, workers: 4, latencies: [5] },
    ownWrites: { objects: 400, workers: 2 },
    latency: { creates: 10, latencyMs: 10, workers: 2 },
    steady: { objects: 10000, workers: 4, latencies: [5], resyncPeriodSeconds: 60 },
    coalescing: { updates: 100, windowMs: 1000 },
    grantRecheck: { objects: 10000, workers: 4, intervalSeconds: 120, latencyMs: 5 },
    memory: { objects: [10000, 50000] },
    redisMemory: { objects: [10000] },
    redisCluster: { objects: 2000, workers: 4, latencyMs: 5 },
    queueFloor: { quick: false },
    startUp: { runs: 7, latencyMs: 10, workers: 2, capSeconds: 120 },
    idle: { objects: 1000, workers: 2, latencyMs: 5, settleSeconds: 35, windowSeconds: 60 },
    memoryLimit: {
      objects: [10000, 50000],
      workers: 2,
      latencyMs: 5,
      capSeconds: 240,
    },
    profile: { objects: 2000, workers: 4, latencyMs: 20 },
  },
  quick: {
    name: 'quick',
    latencies: [5],
    coldStart: {
      objects: [300],
      workers: [1, 2],
      largeLatencies: [5],
      baselineConcurrency: [16],
      capSeconds: 20,
      largeCapSeconds: 20,
      latencyBound: { objects: 100, latencyMs: 100, workers: [1, 2] },
      small: { objects: 100, latencyMs: 10, workers: [2] },
    },
    workerConcurrency: 10,
    shards: 4,
    burst: { objects: 200, workers: 2 },
    churn: { objects: 500, rates: [50], seconds: 5, workers: 2, latencies: [5] },
    ownWrites: { objects: 100, workers: 2 },
    latency: { creates: 5, latencyMs: 10, workers: 2 },
    steady: { objects: 500, workers: 2, latencies: [5], resyncPeriodSeconds: 15 },
    coalescing: { updates: 100, windowMs: 1000 },
    grantRecheck: { objects: 500, workers: 2, intervalSeconds: 40, latencyMs: 5 },
    memory: { objects: [300, 1000] },
    redisMemory: { objects: [300] },
    redisCluster: { objects: 300, workers: 2, latencyMs: 5 },
    queueFloor: { quick: true },
    startUp: { runs: 5, latencyMs: 10, workers: 2, capSeconds: 120 },
    idle: { objects: 100, workers: 2, latencyMs: 5, settleSeconds: 2, windowSeconds: 10 },
    memoryLimit: {
      objects: [300],
      workers: 1,
      latencyMs: 0,
      capSeconds: 60,
    },
    profile: { objects: 300, workers: 2, latencyMs: 5 },
  },
};
