import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, before, describe, test } from 'node:test';
import { Registry } from 'prom-client';
import {
  eventually,
  type ManagedProcess,
  type RedisServer,
  startProcess,
  startRedisServer,
} from '#testing';
import {
  isFencedError,
  NotReplicatedError,
  shardKeys,
  shardOf,
  TerminalError,
  WorkQueue,
  type Handler,
  type QueueOptions,
} from '../src/index.js';
import { parseJobId } from '../src/job-ids.js';
import {
  backendKinds,
  gate,
  queueOptions,
  startBackend,
  startConsumer,
  waitForIdle,
  type Backend,
} from './support.js';
import type { ConsumerProcessConfig } from './consumer-process.js';

for (const kind of backendKinds) {
  describe(`queue contract (${kind} Redis)`, () => {
    let backend: Backend;
    const closers: (() => Promise<unknown>)[] = [];
    const producer = (options: QueueOptions): WorkQueue => {
      const queue = new WorkQueue(options);
      closers.push(() => queue.close());
      return queue;
    };
    const consumer = (...args: Parameters<typeof startConsumer>) => {
      const started = startConsumer(...args);
      closers.push(() => started.consumer.shutdown({ drainTimeoutMs: 1_000 }));
      return started;
    };
    /** Due time of the key's timer job, in ms from now; BullMQ scores by the client clock. */
    const dueIn = async (options: QueueOptions, key: string): Promise<number | undefined> => {
      const client = backend.client();
      const keys = shardKeys('wq', options.name, shardOf(key, options.shards ?? 16));
      const delayed = await client.zrange(keys.delayed, '0', '-1', 'WITHSCORES');
      for (let i = 0; i < delayed.length; i += 2) {
        const job = parseJobId(delayed[i] as string);
        if (job?.kind === 'timer' && job.key === key) {
          return Math.floor(Number(delayed[i + 1]) / 0x1000) - Date.now();
        }
      }
      return undefined;
    };

    before(async () => {
      backend = await startBackend(kind);
    });
    after(async () => {
      await Promise.all(closers.map((close) => close()));
      await backend.stop();
    });

    test('1. a key waits at most once: N adds while it waits give one run', async () => {
      const options = queueOptions(backend);
      const queue = producer(options);
      const added = [];
      for (let i = 0; i < 5; i++) added.push(await queue.add('default/a'));
      assert.deepEqual(added, [true, false, false, false, false]);
      assert.equal(await queue.len(), 1);
      const { runs } = consumer(options);
      await eventually('the run', () => runs.length === 1 && runs[0]?.end !== undefined);
      await waitForIdle(queue);
      assert.equal(runs.length, 1);
    });

    test('2. a key is never run by two consumers at once', async () => {
      const options = queueOptions(backend);
      const queue = producer(options);
      const active = new Set<string>();
      let overlaps = 0;
      const handler = async (key: string) => {
        if (active.has(key)) overlaps++;
        active.add(key);
        await new Promise((r) => setTimeout(r, Math.random() * 3));
        active.delete(key);
      };
      const a = consumer(options, handler);
      const b = consumer(options, handler);
      const lastAdd = new Map<string, number>();
      await Promise.all(
        Array.from({ length: 8 }, async (_, lane) => {
          for (let i = 0; i < 60; i++) {
            const key = `ns/hot-${(lane + i) % 4}`;
            lastAdd.set(key, Date.now());
            await queue.add(key);
          }
        }),
      );
      await waitForIdle(queue);
      const runs = [...a.runs, ...b.runs];
      assert.equal(overlaps, 0);
      assert.ok(a.runs.length > 0 && b.runs.length > 0, 'both consumers took keys');
      for (const [key, at] of lastAdd) {
        assert.ok(
          runs.some((r) => r.key === key && r.start >= at),
          `${key} ran after its last add`,
        );
      }
    });

    test('3. an add during a run is not lost: the key runs again after the run', async () => {
      const options = queueOptions(backend);
      const queue = producer(options);
      const hold = gate();
      const { runs } = consumer(options, async () => {
        if (runs.length === 1) await hold.promise;
      });
      await queue.add('default/b');
      await eventually('the first run', () => runs.length === 1);
      assert.equal(await queue.add('default/b'), true, 'the add during the run is pending');
      assert.equal(await queue.add('default/b'), false, 'a second add during the run coalesces');
      hold.open();
      await eventually('the second run', () => runs.length === 2 && runs[1]?.end !== undefined);
      await waitForIdle(queue);
      assert.equal(runs.length, 2);
      assert.ok(
        (runs[1]?.start ?? 0) >= (runs[0]?.end ?? Infinity),
        'the second run started after the first',
      );
    });

    test('4. addAfter keeps the earliest due time; a plain add makes a delayed key due now', async () => {
      const options = queueOptions(backend);
      const queue = producer(options);
      await queue.addAfter('default/c', 60_000);
      await queue.addAfter('default/c', 30_000);
      await queue.addAfter('default/c', 90_000);
      const due = await dueIn(options, 'default/c');
      assert.ok(due !== undefined && due > 29_000 && due <= 30_000, `due in ${due} ms`);
      assert.equal(await queue.len(), 0);
      assert.equal(await queue.add('default/c'), true);
      assert.equal(await dueIn(options, 'default/c'), undefined, 'no longer delayed');
      assert.equal(await queue.len(), 1);
      await queue.addAfter('default/c', 10_000);
      assert.equal(await dueIn(options, 'default/c'), undefined, 'a pending key ignores addAfter');
    });

    test('4. an event during a run beats the RequeueAfter the run returns', async () => {
      const options = queueOptions(backend);
      const queue = producer(options);
      const hold = gate();
      const { runs } = consumer(options, async () => {
        if (runs.length > 1) return undefined;
        await hold.promise;
        return { requeueAfter: 600_000 };
      });
      await queue.add('default/d');
      await eventually('the first run', () => runs.length === 1);
      await queue.add('default/d');
      hold.open();
      await eventually('the run the event asked for', () => runs.length === 2);
      await waitForIdle(queue);
    });

    /**
     * Runs the key once with a handler that leaves a long delay pending (RequeueAfter or backoff),
     * adds the key again while the delay is pending, and waits for the run the add asked for: far
     * sooner than the 600 s delay, so only the add can have started it.
     */
    const addWhileDelayPending = async (options: QueueOptions, key: string, handler: Handler) => {
      const queue = producer(options);
      const { runs } = consumer(options, (k, ctx) =>
        runs.length === 1 ? handler(k, ctx) : undefined,
      );
      await queue.add(key);
      await eventually('a pending delay', async () => (await dueIn(options, key)) !== undefined);
      const added = await queue.add(key);
      await eventually('the run of the add', () => runs.length === 2 && runs[1]?.end !== undefined);
      await waitForIdle(queue);
      return { queue, runs, added };
    };

    test('4. an event for a key whose RequeueAfter is pending runs it now, not at the delay', async () => {
      const { runs, added } = await addWhileDelayPending(
        queueOptions(backend),
        'default/pending-after',
        () => ({ requeueAfter: 600_000 }),
      );
      assert.equal(added, true);
      assert.equal(runs.length, 2);
    });

    test('5. an event for a key whose backoff is pending runs it now and keeps its failure count', async () => {
      const { queue, runs } = await addWhileDelayPending(
        queueOptions(backend, { backoff: { baseMs: 600_000, maxMs: 600_000 } }),
        'default/pending-backoff',
        () => {
          throw new Error('injected');
        },
      );
      assert.deepEqual(
        runs.map((r) => r.failures),
        [0, 1],
      );
      assert.equal(await queue.numRequeues('default/pending-backoff'), 0, 'success reset it');
    });

    test('4. addAfter during a run is kept: the key runs again when it falls due', async () => {
      const options = queueOptions(backend);
      const queue = producer(options);
      const hold = gate();
      const { runs } = consumer(options, async () => {
        if (runs.length === 1) await hold.promise;
      });
      await queue.add('default/aa');
      await eventually('the first run', () => runs.length === 1);
      await queue.addAfter('default/aa', 30);
      hold.open();
      await eventually('the delayed run', () => runs.length === 2 && runs[1]?.end !== undefined);
      await waitForIdle(queue);
      assert.equal(runs.length, 2);
    });

    test('4. RequeueAfter runs the key again after the delay', async () => {
      const options = queueOptions(backend);
      const queue = producer(options);
      const { runs } = consumer(options, () =>
        runs.length === 1 ? { requeueAfter: 50 } : undefined,
      );
      await queue.add('default/e');
      await eventually('the requeued run', () => runs.length === 2 && runs[1]?.end !== undefined);
      await waitForIdle(queue);
      assert.equal(runs.length, 2);
    });

    test('5. errors back off per key, doubling to the cap; RequeueAfter and success reset it', async () => {
      // Long delays keep the schedule in Redis observable; adds pull each retry forward.
      const options = queueOptions(backend, { backoff: { baseMs: 60_000, maxMs: 240_000 } });
      const queue = producer(options);
      const script = ['error', 'error', 'error', 'error', 'after', 'error', 'ok'];
      const { runs } = consumer(options, () => {
        const step = script[runs.length - 1];
        if (step === 'error') throw new Error('injected');
        return step === 'after' ? { requeueAfter: 300_000 } : undefined;
      });
      const expected = [60_000, 120_000, 240_000, 240_000, 300_000, 60_000, undefined];
      const requeues = [1, 2, 3, 4, 0, 1, 0];
      for (let i = 0; i < script.length; i++) {
        await queue.add('default/f');
        await eventually(
          `run ${i + 1}`,
          async () => runs.length === i + 1 && (await queue.depth()).every((d) => d.running === 0),
        );
        const due = await dueIn(options, 'default/f');
        const want = expected[i];
        if (want === undefined) assert.equal(due, undefined);
        else
          assert.ok(
            due !== undefined && due > want - 2_000 && due <= want,
            `run ${i + 1}: due in ${due}, want ${want}`,
          );
        assert.equal(await queue.numRequeues('default/f'), requeues[i]);
      }
      assert.deepEqual(
        runs.map((r) => r.failures),
        [0, 1, 2, 3, 4, 0, 1],
      );
    });

    test('5. addRateLimited counts a failure and adds after the backoff; forget resets it', async () => {
      const options = queueOptions(backend, { backoff: { baseMs: 60_000, maxMs: 240_000 } });
      const queue = producer(options);
      await queue.addRateLimited('default/rl');
      await queue.addRateLimited('default/rl');
      assert.equal(await queue.numRequeues('default/rl'), 2);
      const due = await dueIn(options, 'default/rl');
      // The first call's 60 s due time is the earlier one and is kept.
      assert.ok(due !== undefined && due > 58_000 && due <= 60_000, `due in ${due} ms`);
      await queue.forget('default/rl');
      assert.equal(await queue.numRequeues('default/rl'), 0);
    });

    test('5. a terminal error does not requeue', async () => {
      const options = queueOptions(backend);
      const queue = producer(options);
      const { runs } = consumer(options, () => {
        throw new TerminalError('cannot be fixed by retrying');
      });
      await queue.add('default/g');
      await eventually('the run', () => runs.length === 1 && runs[0]?.end !== undefined);
      await waitForIdle(queue);
      assert.equal(runs.length, 1);
      assert.equal(await queue.numRequeues('default/g'), 0);
    });

    test('6. a consumer SIGKILLed mid-run loses no key: it runs elsewhere after the lock expires', async () => {
      const options = queueOptions(backend, { lockDurationMs: 1_000 });
      const queue = producer(options);
      const child = await runInConsumerProcess(closers, queue, options, 'hang/h');
      child.child.kill('SIGKILL');
      await child.exited;
      const { runs } = consumer(options, () => undefined);
      await eventually('the recovered run', () =>
        runs.some((r) => r.key === 'hang/h' && r.end !== undefined),
      );
      await waitForIdle(queue);
    });

    test('6. a stalled consumer loses its lease: another runs the key and the stalled result is fenced', async () => {
      const options = queueOptions(backend, { lockDurationMs: 1_000 });
      const queue = producer(options);
      const release = releaseFile(closers);
      const child = await runInConsumerProcess(closers, queue, options, 'stall/s', release);
      const { runs } = consumer(options, () => undefined);
      // The first run stalls until the key has run here: the takeover happens during the stall.
      await eventually('the run that took over', () => runs.some((r) => r.key === 'stall/s'));
      await writeFile(release, '');
      assert.ok(await child.waitForLine(/^L stall\/s$/));
      await child.waitForLine(/^E stall\/s /);
      await waitForIdle(queue);
      assert.equal(runs.length, 1, 'the stalled run ending made the key run again');
    });

    if (kind !== 'standalone') {
      test('6. a takeover whose claim the replicas do not confirm is not run; the key runs at the next one', async () => {
        const options = queueOptions(backend, { lockDurationMs: 1_000 });
        const queue = producer(options);
        const release = releaseFile(closers);
        const child = await runInConsumerProcess(closers, queue, options, 'stall/r', release);
        const replicas = replicaServers(backend);
        const errors: Error[] = [];
        replicas.forEach((r) => r.pause());
        let started: ReturnType<typeof consumer>;
        try {
          started = consumer(options, () => undefined);
          started.consumer.on('error', (err) => errors.push(err));
          await eventually('the unconfirmed claim', () =>
            errors.some((e) => e instanceof NotReplicatedError && /stall\/r/.test(e.message)),
          );
          assert.equal(started.runs.length, 0, 'a claim the replicas did not confirm ran');
        } finally {
          replicas.forEach((r) => r.resume());
        }
        await eventually('the run that took over', () => started.runs.length > 0);
        await writeFile(release, '');
        assert.ok(await child.waitForLine(/^L stall\/r$/));
        await waitForIdle(queue);
        assert.deepEqual(
          started.runs.map((r) => r.key),
          ['stall/r'],
        );
      });
    }

    test('7. keys spread over shards; consumers serve a subset and can join later', async () => {
      const options = queueOptions(backend, { shards: 4 });
      const queue = producer(options);
      const keys = Array.from({ length: 40 }, (_, i) => `ns/k-${i}`);
      await queue.addBulk(keys, { priority: 'normal' });
      const low = consumer(options, undefined, { shards: [0, 1] });
      await eventually('shards 0 and 1', async () =>
        (await queue.depth()).slice(0, 2).every((d) => d.ready + d.running === 0),
      );
      const waiting = (await queue.depth()).slice(2).reduce((n, d) => n + d.ready, 0);
      assert.equal(waiting, keys.filter((k) => shardOf(k, 4) >= 2).length);
      const high = consumer(options, undefined, { shards: [2, 3] });
      await waitForIdle(queue);
      assert.ok(low.runs.every((r) => r.shard < 2 && shardOf(r.key, 4) === r.shard));
      assert.ok(high.runs.every((r) => r.shard >= 2 && shardOf(r.key, 4) === r.shard));
      assert.deepEqual([...low.runs, ...high.runs].map((r) => r.key).sort(), [...keys].sort());
    });

    test('7. a busy shard hands its slot to another shard that waits, instead of running its next key', async () => {
      const options = queueOptions(backend, { shards: 2 });
      const queue = producer(options);
      const names = Array.from({ length: 100 }, (_, i) => `ns/s-${i}`);
      const busy = names.filter((k) => shardOf(k, 2) === 0).slice(0, 3);
      const other = names.find((k) => shardOf(k, 2) === 1)!;
      for (const key of busy) await queue.add(key);
      const first = gate();
      const rest = gate();
      // One slot: shard 0's lane takes it at start and shard 1's waits for it from then on.
      const { runs } = consumer(
        options,
        (key) => (key === busy[0] ? first.promise : key === other ? undefined : rest.promise),
        { concurrency: 1 },
      );
      await eventually('the first key running', () => runs.length === 1);
      await queue.add(other);
      first.open();
      // Were the slot kept for shard 0's next key, that key would hold it until `rest` opens.
      await eventually('the other shard’s key', () => runs.some((r) => r.key === other));
      assert.deepEqual(
        runs.slice(0, 2).map((r) => r.key),
        [busy[0], other],
      );
      rest.open();
      await waitForIdle(queue);
      assert.deepEqual(
        runs.map((r) => r.key),
        [busy[0], other, ...busy.slice(1)],
      );
    });

    test('8. low-priority bulk adds run after normal adds; a normal add raises a low key', async () => {
      const options = queueOptions(backend, { shards: 1 });
      const queue = producer(options);
      const bulk = Array.from({ length: 20 }, (_, i) => `ns/bulk-${i}`);
      assert.equal(await queue.addBulk(bulk), 20);
      assert.equal(await queue.add('ns/urgent'), true);
      assert.equal(await queue.add('ns/bulk-7'), false, 'raising a pending key is not a new add');
      const { runs } = consumer(options, undefined, { concurrency: 1 });
      await waitForIdle(queue);
      assert.deepEqual(
        runs.slice(0, 2).map((r) => r.key),
        ['ns/urgent', 'ns/bulk-7'],
      );
      assert.equal(runs.length, 21);
    });

    test('shutdown drains the run in flight and takes no more keys', async () => {
      const options = queueOptions(backend, { shards: 1 });
      const queue = producer(options);
      const hold = gate();
      const { consumer: c, runs } = startConsumer(options, () => hold.promise);
      await queue.add('ns/drain');
      await eventually('the run', () => runs.length === 1);
      const stopped = c.shutdown();
      await queue.add('ns/after-shutdown');
      setTimeout(hold.open, 50);
      await stopped;
      assert.ok(runs[0]?.end !== undefined, 'the run finished before shutdown resolved');
      assert.deepEqual(
        runs.map((r) => r.key),
        ['ns/drain'],
      );
      assert.equal(await queue.len(), 1, 'the later key still waits');
    });

    test('shutdown past the drain timeout aborts the run and hands its key back', async () => {
      const options = queueOptions(backend, { shards: 1 });
      const queue = producer(options);
      const { consumer: c, runs } = startConsumer(
        options,
        (_key, ctx) =>
          new Promise((_, reject) =>
            ctx.signal.addEventListener('abort', () => reject(ctx.signal.reason)),
          ),
      );
      await queue.add('ns/handback');
      await eventually('the run', () => runs.length === 1);
      await c.shutdown({ drainTimeoutMs: 100 });
      assert.equal(await queue.len(), 1, 'the key is due again');
      assert.equal(await queue.numRequeues('ns/handback'), 0, 'handing back is not a failure');
      const next = consumer(options);
      await eventually('the run on another consumer', () => next.runs.length === 1);
    });

    test('metrics: client-go workqueue names and labels in the given registry', async () => {
      const registry = new Registry();
      const options = queueOptions(backend, { registry, controller: 'backupjob' });
      const queue = producer(options);
      await queue.add('ns/m1');
      await queue.add('ns/m1');
      await queue.add('ns/m2');
      let failed = false;
      const started = consumer(options, (key) => {
        if (key === 'ns/m2' && !failed) {
          failed = true;
          throw new Error('once');
        }
      });
      await waitForIdle(queue);
      // Redis is idle once a run's result is written, but the consumer holds the run (and counts it
      // as unfinished work) until its last bookkeeping write returns.
      await eventually('the consumer to hold no run', () => started.consumer.running.length === 0);
      await eventually(
        'three runs',
        async () =>
          metric(await registry.getMetricsAsJSON(), 'workqueue_work_duration_seconds', 'count') ===
          3,
      );
      const json = await registry.getMetricsAsJSON();
      // m1 and m2, then m2 again when its backoff fell due; the duplicate add is not counted.
      assert.equal(metric(json, 'workqueue_adds_total'), 3);
      assert.equal(metric(json, 'workqueue_retries_total'), 1);
      assert.equal(metric(json, 'workqueue_queue_duration_seconds', 'count'), 3);
      assert.equal(metric(json, 'workqueue_depth'), 0);
      assert.equal(metric(json, 'workqueue_unfinished_work_seconds'), 0);
      assert.equal(metric(json, 'workqueue_longest_running_processor_seconds'), 0);
      const labels = json.find((m) => m.name === 'workqueue_adds_total')?.values[0]?.labels;
      assert.deepEqual(labels, { name: options.name, controller: 'backupjob' });
    });

    test("metrics: BullMQ's own Prometheus export covers every shard queue", async () => {
      const options = queueOptions(backend, { shards: 3 });
      const queue = producer(options);
      await queue.add('ns/b1');
      const text = await queue.exportPrometheusMetrics();
      assert.equal(text.match(/^# TYPE bullmq_job_count gauge$/gm)?.length, 1, 'one TYPE line');
      for (let shard = 0; shard < 3; shard++) {
        assert.match(
          text,
          new RegExp(
            `^bullmq_job_count\\{queue="${options.name}-${shard}",state="waiting"\\} `,
            'm',
          ),
        );
      }
      const waiting = [
        ...text.matchAll(/^bullmq_job_count\{queue="[^"]+",state="waiting"\} (\d+)$/gm),
      ];
      assert.equal(
        waiting.reduce((n, m) => n + Number(m[1]), 0),
        1,
      );
    });

    test('a held shard: a consumer that already knows the epoch runs no key until the hold ends', async () => {
      const options = queueOptions(backend);
      const queue = producer(options);
      const keys = shardKeys('wq', options.name, shardOf('ns/held', options.shards ?? 16));
      const raw = backend.client();
      const holdLeft: number[] = [];
      const c = consumer(options, async () => {
        holdLeft.push(await raw.pttl(keys.hold));
      });
      // The consumer has seen the shard's epoch and run a key: its next run start finds the
      // epoch unchanged, so only the hold itself can stop the run.
      await queue.add('ns/held');
      await eventually('the first run', () => c.runs.length === 1);
      // What another client sets when it finds the shard lost (ShardQueue.checkEpoch).
      await raw.set(keys.hold, '1', 'PX', 600, 'NX');
      await queue.add('ns/held');
      await eventually('the run after the hold', () => c.runs.length === 2);
      assert.deepEqual(holdLeft, [-2, -2], 'no run started while the hold was set');
    });

    test('fencing: once a newer leader term raised the fences, adds of an older term are refused', async () => {
      const options = queueOptions(backend);
      const queue = producer(options);
      await queue.raiseFence(3);
      assert.equal(await queue.add('ns/current', { term: 3 }), true);
      await assert.rejects(queue.add('ns/late', { term: 2 }), (err: Error) => {
        assert.ok(isFencedError(err));
        assert.deepEqual([err.term, err.fence], [2, 3]);
        return true;
      });
      await assert.rejects(queue.raiseFence(2), (err: Error) => isFencedError(err));
      // The refused key was never added; a newer term and an unfenced add both go through.
      assert.equal(await queue.len(), 1);
      assert.equal(await queue.add('ns/late', { term: 4 }), true);
      assert.equal(await queue.add('ns/unfenced'), true);
      assert.equal(await queue.len(), 3);
    });

    if (kind === 'cluster') {
      test('7. each shard lives in one Cluster slot, and shards spread over the primaries', async () => {
        const client = backend.client();
        const slots = new Set<number>();
        for (let shard = 0; shard < 16; shard++) {
          const keys = Object.values(shardKeys('wq', 'spread', shard));
          const shardSlots = await Promise.all(keys.map((k) => client.cluster('KEYSLOT', k)));
          assert.equal(new Set(shardSlots).size, 1, `shard ${shard} keys share a slot`);
          slots.add(Number(shardSlots[0]));
        }
        const ranges = (await client.cluster('SLOTS')) as [number, number][];
        const primaries = new Set(
          [...slots].map((slot) => ranges.findIndex(([from, to]) => slot >= from && slot <= to)),
        );
        assert.ok(primaries.size >= 2, 'shards on more than one primary');
      });
    }
    if (kind === 'standalone') {
      test('Redis restarted empty: producer and consumer report reset, then work again', async () => {
        const options = queueOptions(backend);
        const queue = producer(options);
        const { consumer: c, runs } = consumer(options);
        await queue.add('ns/r1');
        await eventually('the first run', () => runs.length === 1);
        await Promise.all([queue.checkForReset(), c.checkForReset()]);
        const resets = { producer: 0, consumer: 0 };
        queue.on('reset', () => resets.producer++);
        c.on('reset', () => resets.consumer++);
        await backend.restartEmpty?.();
        await eventually('reset events', () => resets.producer > 0 && resets.consumer > 0);
        await eventually(
          'an add to succeed',
          async () => (await queue.add('ns/r2').catch(() => false)) !== false,
        );
        await eventually('a run after the restart', () => runs.some((r) => r.key === 'ns/r2'));
      });

      test('Redis restarted empty: a key running then is not run again until that run ended', async () => {
        const options = queueOptions(backend);
        const queue = producer(options);
        const held = gate();
        // The run ends only when the queue aborts it: its lease vanished with the data.
        const a = consumer(options, (key, ctx) =>
          key === 'ns/long'
            ? new Promise<void>((resolve) => {
                ctx.signal.addEventListener('abort', () => resolve());
                void held.promise.then(resolve);
              })
            : undefined,
        );
        await queue.add('ns/long');
        await eventually('the first run', () => a.runs.length === 1);
        // Another consumer, idle, that knows the queue as it was before the restart.
        const b = consumer(options);
        await Promise.all([queue, a.consumer, b.consumer].map((c) => c.checkForReset()));
        await backend.restartEmpty?.();
        // What the watcher does on `reset`: add every key again.
        await eventually(
          'the key to be added again',
          async () => (await queue.add('ns/long').catch(() => false)) !== false,
        );
        await eventually('the key to run again', () => a.runs.length + b.runs.length === 2);
        const [first, second] = [...a.runs, ...b.runs].sort((x, y) => x.start - y.start);
        held.open();
        assert.ok(first && second);
        assert.ok(first.end !== undefined, 'the run from before the restart was still going');
        assert.ok(
          second.start >= first.end,
          `the second run started ${first.end - second.start} ms before the first ended`,
        );
      });

      test('Redis gone: every WorkQueue call fails instead of hanging; consumer shutdown completes', async () => {
        const server = await startRedisServer();
        const options = queueOptions(backend, { connection: { url: server.url } });
        const queue = new WorkQueue(options);
        const { consumer: c } = startConsumer(options);
        await queue.add('ns/x');
        await server.stop();
        // All at once: each one waits out the client's retries before it fails.
        const calls: [string, Promise<unknown>][] = [
          ['add', queue.add('ns/y')],
          ['addBulk', queue.addBulk(['ns/y', 'ns/z'])],
          ['addAfter', queue.addAfter('ns/y', 1_000)],
          ['addRateLimited', queue.addRateLimited('ns/y')],
          ['forget', queue.forget('ns/x')],
          ['numRequeues', queue.numRequeues('ns/x')],
          ['len', queue.len()],
          ['depth', queue.depth()],
          ['raiseFence', queue.raiseFence(1)],
        ];
        await Promise.all(calls.map(([name, call]) => assert.rejects(call, name)));
        await c.shutdown({ drainTimeoutMs: 500 });
        await queue.close();
      });
    }
  });
}

/** Starts a consumer process and resolves once it has started running `key`. */
async function runInConsumerProcess(
  closers: (() => Promise<unknown>)[],
  queue: WorkQueue,
  options: QueueOptions,
  key: string,
  stallUntil?: string,
): Promise<ManagedProcess> {
  const config: ConsumerProcessConfig = {
    queue: options,
    concurrency: 2,
    maxRunMs: 0,
    errorRate: 0,
    requeueRate: 0,
    terminalRate: 0,
    requeueAfterMs: [0, 0],
    longRunRate: 0,
    longRunMs: 0,
    stallUntil,
  };
  const child = startProcess({
    name: 'consumer',
    command: process.execPath,
    args: [
      fileURLToPath(new URL('./consumer-process.js', import.meta.url)),
      JSON.stringify(config),
    ],
  });
  closers.push(() => child.stop('SIGKILL'));
  await child.waitForLine(/^ready$/);
  await queue.add(key);
  await child.waitForLine((line) => line.startsWith(`S ${key} `));
  return child;
}

/** A path for a file that does not exist yet, removed after the tests. */
function releaseFile(closers: (() => Promise<unknown>)[]): string {
  const file = join(tmpdir(), `queue-contract-${process.pid}-${randomUUID()}`);
  closers.push(() => rm(file, { force: true }));
  return file;
}

/** The servers of the backend that replicate a primary. */
function replicaServers(backend: Backend): RedisServer[] {
  if (backend.cluster)
    return backend.cluster.servers.filter((_, i) => i >= backend.cluster!.nodes.length);
  return backend.sentinel?.servers.slice(1) ?? [];
}

type MetricJson = Awaited<ReturnType<Registry['getMetricsAsJSON']>>;

/** The value of a single-series metric, or a histogram's count. */
function metric(
  json: MetricJson,
  name: string,
  part: 'value' | 'count' = 'value',
): number | undefined {
  const values = (json.find((m) => m.name === name)?.values ?? []) as {
    value: number;
    metricName?: string;
  }[];
  if (part === 'count') return values.find((v) => v.metricName === `${name}_count`)?.value;
  return values[0]?.value;
}
