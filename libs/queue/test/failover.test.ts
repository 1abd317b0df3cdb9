import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { eventually, type PromoteBy, withRedis } from '#testing';
import {
  NotReplicatedError,
  QueueConsumer,
  shardKeys,
  WorkQueue,
  type QueueOptions,
  type RunContext,
} from '../src/index.js';
import { queueOptions, startBackend, type Backend } from './support.js';

/** One run of a key by one of the test's consumers. */
interface Run {
  key: string;
  consumer: string;
  start: number;
  end?: number;
  aborted?: boolean;
}

/**
 * Two consumers and a producer in this process, each with its own connections, so that a run's
 * start and end are on one clock: the overlap check is exact. Keys under `slow/` run for
 * `slowMs` unless aborted, so that a run is in flight when the primary dies.
 */
class Harness {
  readonly runs: Run[] = [];
  readonly resets: string[] = [];
  readonly leaseLost: string[] = [];
  /** What the queue reported while the primary was away, for a failure's message. */
  readonly errors: string[] = [];
  private readonly started = Date.now();
  readonly producer: WorkQueue;
  readonly consumers: QueueConsumer[] = [];
  /** When each key was last added (before the add was sent): a run must start after it. */
  readonly lastAdd = new Map<string, number>();
  private loading = false;
  private loop: Promise<void> | undefined;

  constructor(
    readonly options: QueueOptions,
    private readonly slowMs = 0,
  ) {
    this.producer = new WorkQueue(options);
    this.producer.on('reset', () => this.resets.push('producer'));
    this.producer.on('error', () => undefined);
    for (const name of ['c1', 'c2']) {
      const consumer = new QueueConsumer(options);
      consumer.on('reset', () => this.resets.push(name));
      consumer.on('leaseLost', (key) => {
        this.leaseLost.push(key);
        this.note(name, `lease lost: ${key}`);
      });
      consumer.on('error', (err) => this.note(name, err.message));
      consumer.start({ concurrency: 4, handler: (key, ctx) => this.handle(name, key, ctx) });
      this.consumers.push(consumer);
    }
  }

  /** Adds the key until an add is confirmed, as the watcher's key pump does. */
  async add(key: string): Promise<void> {
    for (;;) {
      const sent = Date.now();
      try {
        await this.producer.add(key);
        this.lastAdd.set(key, sent);
        return;
      } catch {
        await sleep(50);
      }
    }
  }

  /** Adds one of `keys` every few milliseconds until stopped. */
  startLoad(keys: readonly string[]): void {
    this.loading = true;
    this.loop = (async () => {
      while (this.loading) {
        await this.add(keys[Math.floor(Math.random() * keys.length)] as string);
        await sleep(5);
      }
    })();
  }

  async stopLoad(): Promise<void> {
    this.loading = false;
    await this.loop;
  }

  /** Every key added has a run that started after its last add, and nothing runs any more. */
  async waitSettled(): Promise<void> {
    await eventually(
      'a run after the last add of every key',
      () =>
        [...this.lastAdd].every(([key, added]) =>
          this.runs.some((r) => r.key === key && r.start >= added && r.end !== undefined),
        ) && this.runs.every((r) => r.end !== undefined),
      90_000,
    );
  }

  /** Pairs of runs of one key whose times intersect. */
  overlaps(): string[] {
    const found: string[] = [];
    const byKey = Map.groupBy(this.runs, (r) => r.key);
    for (const [key, runs] of byKey) {
      runs.sort((a, b) => a.start - b.start);
      for (let i = 1; i < runs.length; i++) {
        const [a, b] = [runs[i - 1] as Run, runs[i] as Run];
        if (b.start < (a.end ?? Infinity)) found.push(`${key}: ${a.consumer} and ${b.consumer}`);
      }
    }
    return found;
  }

  /** A line for a failure's message, with the time since the harness started. */
  note(who: string, what: string): void {
    if (this.errors.at(-1)?.endsWith(`${who}: ${what}`)) return;
    this.errors.push(`${Date.now() - this.started}ms ${who}: ${what}`);
  }

  async close(): Promise<void> {
    await this.stopLoad();
    await Promise.all(this.consumers.map((c) => c.shutdown({ drainTimeoutMs: 1_000 })));
    await this.producer.close();
  }

  private async handle(consumer: string, key: string, ctx: RunContext): Promise<void> {
    const run: Run = { key, consumer, start: Date.now() };
    this.runs.push(run);
    const ms = key.startsWith('slow/') ? this.slowMs : Math.random() * 30;
    await Promise.race([
      sleep(ms),
      new Promise((resolve) => ctx.signal.addEventListener('abort', resolve)),
    ]);
    run.aborted = ctx.signal.aborted;
    run.end = Date.now();
  }
}

const KEYS = Array.from({ length: 40 }, (_, i) => `ns/key-${i}`);

interface Scenario {
  readonly name: string;
  readonly kind: 'cluster' | 'sentinel';
  readonly promoteBy?: PromoteBy;
}

const scenarios: Scenario[] = [
  { name: 'Sentinel: the primary killed, the replica promoted', kind: 'sentinel' },
  {
    name: 'Cluster: the primary of a busy shard killed, its replica promoted by failure detection',
    kind: 'cluster',
    promoteBy: 'failure-detection',
  },
  {
    name: 'Cluster: the primary of a busy shard killed, its replica promoted by CLUSTER FAILOVER FORCE',
    kind: 'cluster',
    promoteBy: 'failover-force',
  },
];

for (const scenario of scenarios) {
  describe(`queue failover (${scenario.name})`, { timeout: 240_000 }, () => {
    let backend: Backend;
    let h: Harness;
    before(async () => {
      backend = await startBackend(scenario.kind, { nodeTimeoutMs: 2000 });
      // A lock outlasting the failover: a run in flight keeps its claim through it.
      h = new Harness(queueOptions(backend, { lockDurationMs: 10_000 }), 3_000);
    });
    after(async () => {
      await h?.close();
      await backend?.stop();
    });

    test('no key is lost or run twice at once, the run in flight keeps its lease, and no reset', async () => {
      h.startLoad(KEYS);
      await eventually('the load to be under way', () => h.runs.length >= 50);
      const slow = 'slow/across-the-failover';
      await h.add(slow);
      await eventually('the slow run to start', () => h.runs.some((r) => r.key === slow));
      h.note('test', 'killing the primary');
      if (scenario.kind === 'cluster') {
        const cluster = backend.cluster!;
        const slot = await cluster.slotOf(
          shardKeys('wq', h.options.name, h.producer.shardOf(slow)).epoch,
        );
        await cluster.killPrimary(slot, scenario.promoteBy!);
      } else {
        await backend.sentinel!.killPrimary();
      }
      const promotedAt = Date.now();
      h.note('test', 'the replica serves as the primary');
      // Keys keep coming after the failover, and must run too.
      await eventually(
        'a run after the failover',
        () => h.runs.some((r) => r.start > promotedAt && r.end !== undefined),
        60_000,
      );
      await sleep(500);
      await h.stopLoad();
      await h.waitSettled();

      assert.deepEqual(h.overlaps(), [], 'two runs of one key at once');
      const slowRuns = h.runs.filter((r) => r.key === slow);
      assert.equal(slowRuns[0]?.aborted, false, 'the run in flight was aborted');
      assert.deepEqual(h.leaseLost, [], `leases lost:\n${h.errors.join('\n')}`);
      // Every write the queue relied on was on the replica: nothing to recover, so no storm.
      assert.deepEqual(h.resets, [], 'reset reported after a failover that lost nothing');
    });
  });
}

describe(
  'queue failover to a replica that missed confirmed writes (Sentinel)',
  { timeout: 240_000 },
  () => {
    let backend: Backend;
    let h: Harness;
    before(async () => {
      backend = await startBackend('sentinel', { password: 'failover-test' });
      h = new Harness(queueOptions(backend, { lockDurationMs: 2_000 }));
    });
    after(async () => {
      await h?.close();
      await backend?.stop();
    });

    const password = { password: 'failover-test' };

    test('a write is confirmed only once the online replica holds it', async () => {
      const [, replica] = backend.sentinel!.servers;
      await h.add('ns/before');
      replica!.pause();
      try {
        // The primary still counts the frozen replica as online: WAIT cannot be answered.
        await assert.rejects(h.producer.add('ns/frozen'), NotReplicatedError);
      } finally {
        replica!.resume();
      }
      await h.add('ns/frozen');
      await h.waitSettled();
    });

    test('a failover to it is reported as a reset by producer and consumers, and work resumes', async () => {
      const { sentinel } = backend;
      const [primary, replica] = sentinel!.servers;
      for (const key of KEYS.slice(0, 8)) await h.add(key);
      await h.waitSettled();
      // The replica stops replicating (its primary refuses its password) and keeps its data.
      await withRedis({ port: replica!.port, ...password }, async (c) => {
        await c.config('SET', 'masterauth', 'wrong');
        await c.call('CLIENT', 'KILL', 'TYPE', 'master');
      });
      const onlineReplicas = async () => {
        const role = await withRedis({ port: primary!.port, ...password }, (c) => c.call('ROLE'));
        return ((role as unknown[])[2] as unknown[]).length;
      };
      await eventually(
        'the primary to have no replica',
        async () => (await onlineReplicas()) === 0,
      );
      // Confirmed with no replica online: the only copy is on the primary.
      for (const key of KEYS.slice(8, 16)) await h.add(key);
      await h.waitSettled();
      assert.deepEqual(h.resets, []);

      await sentinel!.killPrimary();
      await eventually(
        'the producer and both consumers to report the loss',
        () => ['producer', 'c1', 'c2'].every((who) => h.resets.includes(who)),
        60_000,
      );
      // What the watcher does on `reset`: add every key again; they all run.
      const resetAt = Date.now();
      for (const key of KEYS.slice(0, 16)) await h.add(key);
      await h.waitSettled();
      assert.ok(h.runs.some((r) => r.start > resetAt));
      assert.deepEqual(h.overlaps(), []);
    });
  },
);
