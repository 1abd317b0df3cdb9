import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import { EVENT_LOOP_METRICS, registerEventLoopMetrics } from './event-loop.js';

/**
 * prom-client always starts its own event-loop monitor, at the resolution it is given; a day's
 * makes it wake the process about never. Its gauges are replaced by event-loop.ts's.
 */
const PROM_CLIENT_MONITOR_MS = 86_400_000;

/**
 * A private registry per process (never prom-client's global one), so tests can build several
 * side by side and no library's stray global metric leaks into /metrics.
 */
export function createRegistry(options: { defaultMetrics?: boolean } = {}): Registry {
  const registry = new Registry();
  if (options.defaultMetrics ?? true) {
    collectDefaultMetrics({
      register: registry,
      eventLoopMonitoringPrecision: PROM_CLIENT_MONITOR_MS,
    });
    for (const name of EVENT_LOOP_METRICS) registry.removeSingleMetric(name);
    registerEventLoopMetrics(registry);
  }
  return registry;
}

export const RECONCILE_RESULTS = ['success', 'error', 'requeue', 'requeue_after'] as const;
export type ReconcileResultLabel = (typeof RECONCILE_RESULTS)[number];

// controller-runtime's buckets for controller_runtime_reconcile_time_seconds.
const RECONCILE_TIME_BUCKETS = [
  0.005, 0.01, 0.025, 0.05, 0.1, 0.15, 0.2, 0.25, 0.3, 0.35, 0.4, 0.45, 0.5, 0.6, 0.7, 0.8, 0.9,
  1.0, 1.25, 1.5, 1.75, 2.0, 2.5, 3.0, 3.5, 4.0, 4.5, 5, 6, 7, 8, 9, 10, 15, 20, 25, 30, 40, 50, 60,
];

// client-go's buckets for rest_client_request_duration_seconds.
const REST_LATENCY_BUCKETS = [0.005, 0.025, 0.1, 0.25, 0.5, 1, 2, 4, 8, 15, 30, 60];

/** controller-runtime's controller metrics, same names, types and labels, so its dashboards work. */
export class ControllerMetrics {
  readonly reconcileTotal: Counter<'controller' | 'result'>;
  readonly reconcileErrors: Counter<'controller'>;
  readonly terminalReconcileErrors: Counter<'controller'>;
  readonly reconcileTime: Histogram<'controller'>;
  readonly activeWorkers: Gauge<'controller'>;
  readonly maxConcurrentReconciles: Gauge<'controller'>;
  /** Not controller-runtime's: its keys come from its own informers, these from a shared Redis. */
  readonly invalidKeys: Counter<'controller'>;

  constructor(registry: Registry) {
    const registers = [registry];
    this.reconcileTotal = new Counter({
      name: 'controller_runtime_reconcile_total',
      help: 'Total number of reconciliations per controller',
      labelNames: ['controller', 'result'],
      registers,
    });
    this.reconcileErrors = new Counter({
      name: 'controller_runtime_reconcile_errors_total',
      help: 'Total number of reconciliation errors per controller',
      labelNames: ['controller'],
      registers,
    });
    this.terminalReconcileErrors = new Counter({
      name: 'controller_runtime_terminal_reconcile_errors_total',
      help: 'Total number of terminal reconciliation errors per controller',
      labelNames: ['controller'],
      registers,
    });
    this.reconcileTime = new Histogram({
      name: 'controller_runtime_reconcile_time_seconds',
      help: 'Length of time per reconciliation per controller',
      labelNames: ['controller'],
      buckets: RECONCILE_TIME_BUCKETS,
      registers,
    });
    this.activeWorkers = new Gauge({
      name: 'controller_runtime_active_workers',
      help: 'Number of currently used workers per controller',
      labelNames: ['controller'],
      registers,
    });
    this.maxConcurrentReconciles = new Gauge({
      name: 'controller_runtime_max_concurrent_reconciles',
      help: 'Maximum number of concurrent reconciles per controller',
      labelNames: ['controller'],
      registers,
    });
    this.invalidKeys = new Counter({
      name: 'backupjob_operator_invalid_keys_total',
      help: 'Queue keys that were not namespace/name, dropped without a reconcile',
      labelNames: ['controller'],
      registers,
    });
  }

  /**
   * Starts a controller's series at zero, as controller-runtime does, so rate() and alerts see the
   * series before the first reconcile; returns the recorder that controller uses.
   */
  forController(controller: string, maxConcurrentReconciles: number): ReconcileRecorder {
    for (const result of RECONCILE_RESULTS) this.reconcileTotal.inc({ controller, result }, 0);
    this.reconcileErrors.inc({ controller }, 0);
    this.terminalReconcileErrors.inc({ controller }, 0);
    this.activeWorkers.set({ controller }, 0);
    this.maxConcurrentReconciles.set({ controller }, maxConcurrentReconciles);
    this.invalidKeys.inc({ controller }, 0);
    return new ReconcileRecorder(this, controller);
  }
}

/** What a reconcile loop records around each reconcile of one controller. */
export class ReconcileRecorder {
  constructor(
    private readonly metrics: ControllerMetrics,
    readonly controller: string,
  ) {}

  /** A key that named no object was dropped. */
  invalidKey(): void {
    this.metrics.invalidKeys.inc({ controller: this.controller });
  }

  /** Call when a reconcile begins; call the returned function once with its outcome. */
  start(): (result: ReconcileResultLabel, options?: { terminal?: boolean }) => void {
    const labels = { controller: this.controller };
    this.metrics.activeWorkers.inc(labels);
    const stopTimer = this.metrics.reconcileTime.startTimer(labels);
    let done = false;
    return (result, options = {}) => {
      if (done) return;
      done = true;
      stopTimer();
      this.metrics.activeWorkers.dec(labels);
      this.metrics.reconcileTotal.inc({ ...labels, result });
      if (result === 'error') this.metrics.reconcileErrors.inc(labels);
      if (result === 'error' && options.terminal) this.metrics.terminalReconcileErrors.inc(labels);
    };
  }
}

/**
 * `leader_election_master_status{name}`: 1 while this process holds the Lease, 0 as standby; and
 * `leader_election_fenced_writes_total{name}`: writes a deposed leader made after a newer one took
 * over, refused by the newer term's fence in Redis.
 */
export class LeaderElectionMetrics {
  readonly masterStatus: Gauge<'name'>;
  readonly fencedWrites: Counter<'name'>;

  constructor(registry: Registry) {
    this.masterStatus = new Gauge({
      name: 'leader_election_master_status',
      help: "Gauge of if the reporting system is master of the relevant lease, 0 indicates backup, 1 indicates master. 'name' is the string used to identify the lease. Please make sure to group by name.",
      labelNames: ['name'],
      registers: [registry],
    });
    this.fencedWrites = new Counter({
      name: 'leader_election_fenced_writes_total',
      help: "Snapshot writes and key adds this process made as leader that Redis refused because a newer leader's term had written. 'name' is the lease.",
      labelNames: ['name'],
      registers: [registry],
    });
  }

  set(name: string, leading: boolean): void {
    this.masterStatus.set({ name }, leading ? 1 : 0);
  }

  fenced(name: string, writes: number): void {
    this.fencedWrites.inc({ name }, writes);
  }
}

/**
 * `backupjob_operator_resync_skipped_total`: keys a resync (or a relist that brought nothing new)
 * did not enqueue, since the workers' last run over the same objects and configuration wrote
 * nothing and is not yet due again.
 */
export class ResyncMetrics {
  readonly skipped: Counter;

  constructor(registry: Registry) {
    this.skipped = new Counter({
      name: 'backupjob_operator_resync_skipped_total',
      help: 'Keys a resync or an unchanged relist did not enqueue: the last run over the same objects and reconciler configuration wrote nothing and its RequeueAfter is not yet due.',
      registers: [registry],
    });
  }
}

/** client-go's REST client metrics, fed by instrumentKubeConfig(). */
export class RestClientMetrics {
  readonly requests: Counter<'code' | 'method' | 'host'>;
  readonly requestDuration: Histogram<'verb' | 'host'>;

  constructor(registry: Registry) {
    this.requests = new Counter({
      name: 'rest_client_requests_total',
      help: 'Number of HTTP requests, partitioned by status code, method, and host.',
      labelNames: ['code', 'method', 'host'],
      registers: [registry],
    });
    this.requestDuration = new Histogram({
      name: 'rest_client_request_duration_seconds',
      help: 'Request latency in seconds. Broken down by verb, and host.',
      labelNames: ['verb', 'host'],
      buckets: REST_LATENCY_BUCKETS,
      registers: [registry],
    });
  }

  /** `code` is the HTTP status, or `<error>` when no response came (client-go's label for that). */
  observe(method: string, host: string, code: number | '<error>', seconds: number): void {
    this.requests.inc({ code: String(code), method, host });
    this.requestDuration.observe({ verb: method, host }, seconds);
  }
}

/**
 * Prometheus text made outside prom-client (BullMQ's `exportPrometheusMetrics()`), appended to
 * /metrics after the registry's own metrics: one text, or newline-terminated chunks that are
 * written to the scraper as they are made (see gaugeFamilyChunks).
 */
export type MetricsTextSource = () => Promise<string | Iterable<string>>;

export interface OperatorMetrics {
  readonly registry: Registry;
  readonly textSources: Set<MetricsTextSource>;
  readonly controller: ControllerMetrics;
  readonly leaderElection: LeaderElectionMetrics;
  readonly restClient: RestClientMetrics;
  readonly resync: ResyncMetrics;
}

/** Every metric this library defines, on one registry. Queue metrics live in the queue library. */
export function createOperatorMetrics(registry: Registry = createRegistry()): OperatorMetrics {
  return {
    registry,
    textSources: new Set(),
    controller: new ControllerMetrics(registry),
    leaderElection: new LeaderElectionMetrics(registry),
    restClient: new RestClientMetrics(registry),
    resync: new ResyncMetrics(registry),
  };
}
