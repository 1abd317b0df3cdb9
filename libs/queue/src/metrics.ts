import { Counter, Gauge, Histogram, type Registry } from 'prom-client';

type Labels = 'name' | 'controller';
const labelNames: Labels[] = ['name', 'controller'];

/** client-go's workqueue buckets: ExponentialBuckets(1e-8, 10, 12), 10 ns to 1000 s. */
const durationBuckets = Array.from({ length: 12 }, (_, i) =>
  Number((1e-8 * 10 ** i).toPrecision(1)),
);

/** Values only a live producer or consumer knows, read at scrape time. */
export interface WorkQueueGauges {
  depth(): Promise<number>;
  unfinishedWorkSeconds(): number;
  longestRunningProcessorSeconds(): number;
}

interface QueueSeries {
  labels: Record<Labels, string>;
  providers: Set<WorkQueueGauges>;
}

const sum = (values: number[]): number => values.reduce((a, b) => a + b, 0);

const gaugeSpecs = [
  {
    name: 'workqueue_depth',
    help: 'Current depth of workqueue',
    read: (p: WorkQueueGauges) => p.depth(),
    // Every provider reads the same Redis, so one answer is the depth.
    combine: (values: number[]) => values[0] ?? 0,
  },
  {
    name: 'workqueue_unfinished_work_seconds',
    help:
      'How many seconds of work has been done that is in progress and has not been observed by ' +
      'work_duration. Large values indicate stuck threads.',
    read: async (p: WorkQueueGauges) => p.unfinishedWorkSeconds(),
    combine: sum,
  },
  {
    name: 'workqueue_longest_running_processor_seconds',
    help: 'How many seconds has the longest running processor for workqueue been running.',
    read: async (p: WorkQueueGauges) => p.longestRunningProcessorSeconds(),
    combine: (values: number[]) => Math.max(0, ...values),
  },
];

/** Queues registered per registry, so one gauge collects every queue and both sides of one. */
const seriesByRegistry = new WeakMap<Registry, Map<string, QueueSeries>>();

/**
 * The client-go / controller-runtime workqueue metrics, labelled name and controller. A producer
 * and a consumer of one queue in one process share the series.
 */
export class WorkQueueMetrics {
  private readonly adds: Counter<Labels>;
  private readonly retries: Counter<Labels>;
  private readonly queueDuration: Histogram<Labels>;
  private readonly workDuration: Histogram<Labels>;
  private readonly series: QueueSeries;

  constructor(registry: Registry, name: string, controller: string) {
    const labels = { name, controller };
    this.adds = counter(
      registry,
      'workqueue_adds_total',
      'Total number of adds handled by workqueue',
    );
    this.retries = counter(
      registry,
      'workqueue_retries_total',
      'Total number of retries handled by workqueue',
    );
    this.queueDuration = histogram(
      registry,
      'workqueue_queue_duration_seconds',
      'How long in seconds an item stays in workqueue before being requested',
    );
    this.workDuration = histogram(
      registry,
      'workqueue_work_duration_seconds',
      'How long in seconds processing an item from workqueue takes',
    );
    let byQueue = seriesByRegistry.get(registry);
    if (!byQueue) seriesByRegistry.set(registry, (byQueue = new Map()));
    const id = `${name}\u0000${controller}`;
    let series = byQueue.get(id);
    if (!series) byQueue.set(id, (series = { labels, providers: new Set() }));
    this.series = series;
    for (const spec of gaugeSpecs) ensureGauge(registry, spec);
  }

  addProvider(provider: WorkQueueGauges): void {
    this.series.providers.add(provider);
  }

  removeProvider(provider: WorkQueueGauges): void {
    this.series.providers.delete(provider);
  }

  incAdds(n: number): void {
    if (n > 0) this.adds.inc(this.series.labels, n);
  }

  incRetries(): void {
    this.retries.inc(this.series.labels);
  }

  observeQueueDuration(seconds: number): void {
    this.queueDuration.observe(this.series.labels, Math.max(0, seconds));
  }

  observeWorkDuration(seconds: number): void {
    this.workDuration.observe(this.series.labels, Math.max(0, seconds));
  }
}

function counter(registry: Registry, name: string, help: string): Counter<Labels> {
  return (
    (registry.getSingleMetric(name) as Counter<Labels> | undefined) ??
    new Counter({ name, help, labelNames, registers: [registry] })
  );
}

function histogram(registry: Registry, name: string, help: string): Histogram<Labels> {
  return (
    (registry.getSingleMetric(name) as Histogram<Labels> | undefined) ??
    new Histogram({ name, help, labelNames, buckets: durationBuckets, registers: [registry] })
  );
}

function ensureGauge(registry: Registry, spec: (typeof gaugeSpecs)[number]): void {
  if (registry.getSingleMetric(spec.name)) return;
  new Gauge<Labels>({
    name: spec.name,
    help: spec.help,
    labelNames,
    registers: [registry],
    async collect() {
      for (const series of seriesByRegistry.get(registry)?.values() ?? []) {
        const values = await Promise.all(
          [...series.providers].map((p) => spec.read(p).catch(() => Number.NaN)),
        );
        const known = values.filter((v) => !Number.isNaN(v));
        if (known.length > 0) this.set(series.labels, spec.combine(known));
      }
    },
  });
}
