import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { BACKUPJOBS } from '#api';
import type { BackoffOptions } from '../src/backoff.js';
import { ListWatch } from '../src/list-watch.js';
import type { Log, LogFields } from '../src/log.js';
import { eventually } from '#testing';
import { type KubeCluster, startKubeCluster } from '#testing/kube-cluster';

/** The delay the watcher chose after each failure, in order, with what failed. */
class RetryLog implements Log {
  readonly retries: { msg: string; delayMs: number }[] = [];
  debug(): void {}
  info(): void {}
  error(): void {}
  warn(msg: string, fields: LogFields = {}): void {
    if (typeof fields.retryInMs === 'number') this.retries.push({ msg, delayMs: fields.retryInMs });
  }
  delays(msg: string): number[] {
    return this.retries.filter((r) => r.msg === msg).map((r) => r.delayMs);
  }
}

/**
 * client-go's reflector resumes a watch as soon as the server allows: it waits what a 429's
 * Retry-After asks rather than a growing delay, and a watch that stayed healthy long enough makes
 * the next failure a first one again. What is checked is the delay each failure was given.
 */
describe('ListWatch: Retry-After and backoff reset', () => {
  let cluster: KubeCluster;
  before(async () => {
    // Bookmarks once a minute: the watches here are quiet, as a Job watch is most of the time.
    cluster = await startKubeCluster({ bookmarkIntervalMs: 60_000 });
  });
  after(() => cluster.stop());

  async function running(namespace: string, backoff: BackoffOptions) {
    await cluster.createNamespace(namespace);
    const log = new RetryLog();
    const watcher = new ListWatch({
      rest: cluster.rest,
      resource: BACKUPJOBS,
      namespace,
      watchdogMs: 60_000,
      backoff,
      log,
    });
    const controller = new AbortController();
    const done = watcher.run(controller.signal, () => {});
    return {
      watcher,
      log,
      watches: () => cluster.emu.core.watches.count({ namespace }),
      async stop() {
        controller.abort();
        await done;
      },
    };
  }

  test('429 with Retry-After: every list and watch retry waits what the server asked, not a growing delay', async () => {
    const ns = 'retry-after';
    const faults = cluster.emu.core.faults;
    // Our own delay would start at 2 s and grow; the server asks for 1 s each time.
    faults.addError({
      match: { verb: 'list', namespace: ns },
      code: 429,
      retryAfterSeconds: 1,
      count: 4,
    });
    const w = await running(ns, { initialMs: 2000, maxMs: 20_000, jitter: 0.2 });
    try {
      await eventually('a list and a watch', () => w.watcher.synced && w.watches() === 1, 30_000);
      faults.addError({
        match: { verb: 'watch', namespace: ns },
        code: 429,
        retryAfterSeconds: 1,
        count: 3,
      });
      cluster.emu.core.watches.drop({ namespace: ns });
      await eventually(
        'a new watch',
        () => w.log.delays('watch failed').length >= 4 && w.watches() === 1,
        30_000,
      );
      const afterDrop = w.log.delays('watch failed').slice(1);
      for (const delay of [...w.log.delays('list failed'), ...afterDrop]) {
        assert.ok(
          delay >= 1000 && delay <= 1200,
          `a retry after 429 waited ${delay} ms, Retry-After said 1000`,
        );
      }
      assert.equal(w.log.delays('list failed').length, 4);
      assert.equal(afterDrop.length, 3);
    } finally {
      await w.stop();
    }
  });

  test('a watch that stayed open as long as the longest delay makes the next failure a first one; a short one does not', async () => {
    const ns = 'reset';
    const faults = cluster.emu.core.faults;
    const w = await running(ns, { initialMs: 50, maxMs: 400, jitter: 0 });
    try {
      await eventually('a list and a watch', () => w.watcher.synced && w.watches() === 1);
      // The drop (50), two failed re-watches (100, 200) and one accepted and cut at once (400).
      faults.addError({ match: { verb: 'watch', namespace: ns }, code: 500, count: 2 });
      // The third re-watch is accepted and cut at once.
      cluster.emu.core.watches.dropNextWatches(1, { namespace: ns });
      cluster.emu.core.watches.drop({ namespace: ns });
      await eventually(
        'a new watch after a short one',
        () => w.watches() === 1 && w.log.delays('watch failed').length === 4,
      );
      // Quiet and open for longer than the 400 ms cap: the next drop starts over at 50.
      await new Promise((resolve) => setTimeout(resolve, 600));
      cluster.emu.core.watches.drop({ namespace: ns });
      await eventually(
        'a new watch after a long one',
        () => w.watches() === 1 && w.log.delays('watch failed').length === 5,
      );
      assert.deepEqual(w.log.delays('watch failed'), [50, 100, 200, 400, 50]);
    } finally {
      await w.stop();
    }
  });
});
