import { randomBytes } from 'node:crypto';
import type { BackupJob } from '#api';
import type { EventSpec } from '#reconciler';
import { isNotFound } from './api-error.js';
import { microTime, type EventBody, type KubeClients } from './clients.js';

export interface EventRecorderOptions {
  /** events.k8s.io reportingController, e.g. backup.ops.example.com/backupjob-operator. */
  readonly controller: string;
  /** events.k8s.io reportingInstance: which process reported (pod name). */
  readonly instance: string;
  readonly clock?: () => Date;
  /** Most series remembered; the oldest is forgotten first. */
  readonly maxSeries?: number;
  /** A repeat later than this starts a new Event instead of extending the series. */
  readonly seriesWindowMs?: number;
}

interface Series {
  readonly name: string;
  readonly namespace: string;
  count: number;
  lastObservedAt: number;
}

const NAME_MAX = 253;

/**
 * Records events.k8s.io/v1 Events about BackupJobs, aggregated like client-go's event
 * broadcaster: the same type, reason and note on the same object within the window patch the
 * existing Event's series (count, lastObservedTime) instead of creating another. The memory of
 * series is per process and bounded; a forgotten series only means one more Event object.
 */
export class EventRecorder {
  private readonly series = new Map<string, Series>();
  private readonly clock: () => Date;
  private readonly maxSeries: number;
  private readonly windowMs: number;

  constructor(
    private readonly clients: KubeClients,
    private readonly options: EventRecorderOptions,
  ) {
    this.clock = options.clock ?? (() => new Date());
    this.maxSeries = options.maxSeries ?? 1024;
    this.windowMs = options.seriesWindowMs ?? 30 * 60_000;
  }

  /** Number of series remembered (for tests and metrics). */
  get size(): number {
    return this.series.size;
  }

  async record(regarding: BackupJob, event: EventSpec): Promise<void> {
    const key = [regarding.metadata.uid, event.type, event.reason, event.action, event.note].join(
      '\0',
    );
    const now = this.clock();
    const known = this.series.get(key);
    if (known && now.getTime() - known.lastObservedAt <= this.windowMs) {
      if (await this.extend(known, now)) return this.remember(key, known);
    }
    const name = await this.create(regarding, event, now);
    this.remember(key, {
      name,
      namespace: regarding.metadata.namespace as string,
      count: 1,
      lastObservedAt: now.getTime(),
    });
  }

  private remember(key: string, series: Series): void {
    this.series.delete(key);
    this.series.set(key, series);
    while (this.series.size > this.maxSeries) {
      this.series.delete(this.series.keys().next().value as string);
    }
  }

  /** Patches the series; false when the Event is gone (expired) so a new one is created. */
  private async extend(series: Series, now: Date): Promise<boolean> {
    const body = { series: { count: series.count + 1, lastObservedTime: microTime(now) } };
    try {
      await this.clients.patchEvent(series, body);
    } catch (err) {
      if (isNotFound(err)) return false;
      throw err;
    }
    series.count += 1;
    series.lastObservedAt = now.getTime();
    return true;
  }

  private async create(regarding: BackupJob, event: EventSpec, now: Date): Promise<string> {
    const { name = '', namespace = '', uid, resourceVersion } = regarding.metadata;
    // client-go names Events <object>.<unix nanos in hex>; random bits keep processes apart.
    const suffix = `${now.getTime().toString(16)}${randomBytes(4).toString('hex')}`;
    const eventName = `${name.slice(0, NAME_MAX - suffix.length - 1)}.${suffix}`;
    const body: EventBody = {
      apiVersion: 'events.k8s.io/v1',
      kind: 'Event',
      metadata: { name: eventName, namespace },
      eventTime: microTime(now),
      reportingController: this.options.controller,
      reportingInstance: this.options.instance,
      type: event.type,
      reason: event.reason,
      action: event.action,
      note: event.note.slice(0, 1024),
      regarding: {
        apiVersion: regarding.apiVersion,
        kind: regarding.kind,
        name,
        namespace,
        uid,
        resourceVersion,
      },
      related: event.related ? { ...event.related, namespace } : undefined,
    };
    await this.clients.createEvent(body);
    return eventName;
  }
}
