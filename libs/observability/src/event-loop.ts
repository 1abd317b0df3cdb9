import { createHistogram, performance } from 'node:perf_hooks';
import { setImmediate as nextTurn } from 'node:timers/promises';
import { Gauge, type Registry } from 'prom-client';

/**
 * How often the loop's delay is sampled. Each sample is a timer that wakes the process: at
 * prom-client's 10 ms that was 100 wake-ups a second and about two thirds of an idle operator
 * process's CPU (docs/performance.md#idle-cpu). A stall long enough to matter spans several samples.
 */
export const EVENT_LOOP_SAMPLE_MS = 100;

/** prom-client's names for the event-loop gauges, which these replace. */
export const EVENT_LOOP_METRICS = [
  'nodejs_eventloop_lag_seconds',
  'nodejs_eventloop_lag_min_seconds',
  'nodejs_eventloop_lag_max_seconds',
  'nodejs_eventloop_lag_mean_seconds',
  'nodejs_eventloop_lag_stddev_seconds',
  'nodejs_eventloop_lag_p50_seconds',
  'nodejs_eventloop_lag_p90_seconds',
  'nodejs_eventloop_lag_p99_seconds',
] as const;

const STATS = ['min', 'max', 'mean', 'stddev', 'p50', 'p90', 'p99'] as const;
export type DelayStats = Record<(typeof STATS)[number], number>;

/**
 * How late a timer due every `intervalMs` came, sample by sample, in windows. Node's own monitor
 * (`monitorEventLoopDelay`) forgets its previous sample when reset, so a stall that began just
 * after a scrape went unseen; here the previous sample outlives the window.
 */
export class DelayWindow {
  // The histogram takes integers from 1: a delay of d ns is kept as d + 1.
  private readonly histogram = createHistogram();

  constructor(
    private readonly intervalMs: number,
    private last: number,
  ) {}

  /** A sample at `now` (ms, monotonic). */
  tick(now: number): void {
    const lateNs = Math.max(0, Math.round((now - this.last - this.intervalMs) * 1e6));
    this.histogram.record(lateNs + 1);
    this.last = now;
  }

  /** The window's delays in seconds (all 0 without a sample), and a new window. */
  take(): DelayStats {
    const h = this.histogram;
    const seconds = (ns: number) => (h.count === 0 ? 0 : (ns - 1) / 1e9);
    const stats: DelayStats = {
      min: seconds(h.min),
      max: seconds(h.max),
      mean: seconds(h.mean),
      stddev: h.count === 0 ? 0 : h.stddev / 1e9,
      p50: seconds(h.percentile(50)),
      p90: seconds(h.percentile(90)),
      p99: seconds(h.percentile(99)),
    };
    h.reset();
    return stats;
  }
}

/**
 * The event-loop gauges under prom-client's names, sampled every `sampleMs`, one window per
 * scrape. `nodejs_eventloop_lag_seconds` is how long a callback queued by the scrape waited for
 * its turn, read in that same scrape.
 */
export function registerEventLoopMetrics(
  registry: Registry,
  sampleMs = EVENT_LOOP_SAMPLE_MS,
): void {
  const window = new DelayWindow(sampleMs, performance.now());
  setInterval(() => window.tick(performance.now()), sampleMs).unref();
  const registers = [registry];
  const gauges = new Map<keyof DelayStats, Gauge>();
  // Registered first: a scrape collects every metric at once, so this one's collect must set the
  // other gauges before its first await, while they have not been read yet.
  new Gauge({
    name: 'nodejs_eventloop_lag_seconds',
    help: 'How long a callback queued at scrape time waited for the event loop.',
    registers,
    async collect() {
      const stats = window.take();
      for (const stat of STATS) gauges.get(stat)?.set(stats[stat]);
      const queued = process.hrtime.bigint();
      await nextTurn();
      this.set(Number(process.hrtime.bigint() - queued) / 1e9);
    },
  });
  for (const stat of STATS) {
    gauges.set(
      stat,
      new Gauge({
        name: `nodejs_eventloop_lag_${stat}_seconds`,
        help: `The ${stat} of how late a timer due every ${sampleMs} ms came, since the last scrape.`,
        registers,
      }),
    );
  }
}
