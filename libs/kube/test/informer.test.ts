import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { BACKUPJOBS } from '#api';
import { Informer } from '../src/informer.js';
import { objectKey, type KubeObject } from '../src/types.js';
import { eventually } from '#testing';
import { type KubeCluster, startKubeCluster } from '#testing/kube-cluster';

/** The last state each key was delivered in: a resourceVersion, or 'deleted'. */
class Delivered {
  readonly last = new Map<string, string>();
  readonly initial = new Set<string>();
  readonly events: string[] = [];

  handler() {
    return {
      onAdd: (o: KubeObject, initial: boolean) => {
        if (initial) this.initial.add(objectKey(o));
        this.record('add', o);
      },
      onUpdate: (_old: KubeObject, o: KubeObject) => this.record('update', o),
      onDelete: (o: KubeObject) => {
        this.events.push(`delete ${objectKey(o)}`);
        this.last.set(objectKey(o), 'deleted');
      },
    };
  }

  private record(type: string, o: KubeObject): void {
    this.events.push(`${type} ${objectKey(o)}`);
    this.last.set(objectKey(o), o.metadata.resourceVersion ?? '');
  }

  /** Every object on the server was delivered in its current version; every other key as deleted. */
  matches(server: Map<string, string>): boolean {
    for (const [key, rv] of server) if (this.last.get(key) !== rv) return false;
    for (const [key, state] of this.last) if (!server.has(key) && state !== 'deleted') return false;
    return true;
  }
}

function informer(
  cluster: KubeCluster,
  extra: Partial<ConstructorParameters<typeof Informer>[0]> = {},
) {
  return new Informer({
    rest: cluster.rest,
    resource: BACKUPJOBS,
    metadataOnly: true,
    watchdogMs: 1000,
    backoff: { initialMs: 20, maxMs: 200 },
    ...extra,
  });
}

describe('Informer against the API emulator', () => {
  let cluster: KubeCluster;
  before(async () => {
    cluster = await startKubeCluster();
  });
  after(() => cluster.stop());

  test('lists in pages, then delivers adds, updates and deletes', async () => {
    const api = cluster.backupJobs;
    for (let i = 0; i < 5; i++) await api.create('dev', `paged-${i}`);
    const inf = informer(cluster, { namespaces: ['dev'], pageSize: 2 });
    const seen = new Delivered();
    inf.addEventHandler(seen.handler());
    inf.start();
    try {
      await eventually('the informer to sync', () => inf.synced);
      assert.deepEqual(
        [...seen.initial].sort(),
        [0, 1, 2, 3, 4].map((i) => `dev/paged-${i}`),
      );
      assert.ok(cluster.emu.core.log.count({ verb: 'list', resource: 'backupjobs' }) >= 3, 'pages');

      await api.create('dev', 'live');
      await api.patch('dev', 'paged-0', { metadata: { labels: { team: 'db' } } });
      await api.delete('dev', 'paged-1');
      await eventually(
        () => `the delivered events to match the server; delivered:\n${seen.events.join('\n')}`,
        async () => seen.matches(await api.versions().then(only('dev/'))),
      );
      assert.ok(seen.events.includes('add dev/live'));
      assert.ok(seen.events.includes('update dev/paged-0'));
      assert.ok(seen.events.includes('delete dev/paged-1'));
      assert.equal(seen.initial.has('dev/live'), false);
      assert.equal(inf.healthy, true);
    } finally {
      await inf.stop();
    }
  });

  test('resync periodically re-delivers every cached object unchanged', async () => {
    const inf = informer(cluster, { namespaces: ['dev'], resyncPeriodMs: 200 });
    const resyncs = new Map<string, number>();
    inf.addEventHandler({
      onUpdate: (old, o) => {
        if (old.metadata.resourceVersion === o.metadata.resourceVersion)
          resyncs.set(objectKey(o), (resyncs.get(objectKey(o)) ?? 0) + 1);
      },
    });
    inf.start();
    try {
      await eventually('the informer to sync', () => inf.synced);
      const keys = [...inf.keys()];
      assert.ok(keys.length > 0);
      // Twice per key: the second pass shows the resync repeats, not a one-off.
      await eventually('every key resynced twice', () =>
        keys.every((k) => (resyncs.get(k) ?? 0) >= 2),
      );
    } finally {
      await inf.stop();
    }
  });
});

describe('Informer under injected faults loses no change', () => {
  let cluster: KubeCluster;
  before(async () => {
    cluster = await startKubeCluster();
  });
  after(() => cluster.stop());

  /** An informer on its own namespace with two objects, synced; `fault` then runs while writes go on. */
  async function survives(
    namespace: string,
    fault: (cluster: KubeCluster) => unknown,
    beforeStart?: (cluster: KubeCluster) => void,
  ): Promise<void> {
    const api = cluster.backupJobs;
    await cluster.createNamespace(namespace);
    await api.create(namespace, 'a');
    await api.create(namespace, 'b');
    beforeStart?.(cluster);
    const inf = informer(cluster, { namespaces: [namespace] });
    const seen = new Delivered();
    inf.addEventHandler(seen.handler());
    inf.start();
    try {
      await eventually('the informer to sync', () => inf.synced);
      // Synced means listed; the watch opens a moment later, and a fault on watches must find it.
      await eventually(
        'the informer to watch',
        () => cluster.emu.core.watches.count({ namespace }) === 1,
      );
      await fault(cluster);
      await api.patch(namespace, 'a', { metadata: { labels: { changed: 'yes' } } });
      await api.patchStatus(namespace, 'b', { message: 'written while the watch was faulty' }, 'x');
      await api.create(namespace, 'c');
      await api.delete(namespace, 'b');
      cluster.emu.core.faults.clear();
      const server = only(`${namespace}/`);
      await eventually(
        () => `the delivered events to match the server; delivered:\n${seen.events.join('\n')}`,
        async () => seen.matches(server(await api.versions())),
      );
      await eventually('the informer to be healthy after the fault', () => inf.healthy);
    } finally {
      await inf.stop();
    }
  }

  test('a dropped watch is resumed from the last resourceVersion', async () => {
    const mark = cluster.emu.core.log.mark();
    await survives('drop', (c) => c.emu.core.watches.drop({ namespace: 'drop' }));
    assert.equal(cluster.emu.core.log.count({ verb: 'list', namespace: 'drop', since: mark }), 1);
  });

  test('a stalled watch is caught by the watchdog and replaced', async () => {
    const mark = cluster.emu.core.log.mark();
    await survives('stall', (c) => c.emu.core.watches.stall({ namespace: 'stall' }));
    assert.ok(cluster.emu.core.log.count({ verb: 'watch', namespace: 'stall', since: mark }) >= 2);
  });

  test('ERROR 410 in the stream relists', async () => {
    const mark = cluster.emu.core.log.mark();
    await survives('expire', (c) => {
      c.emu.core.watches.expire({ namespace: 'expire' });
      c.emu.core.watches.expireNextWatches(1, { namespace: 'expire' });
    });
    assert.ok(cluster.emu.core.log.count({ verb: 'list', namespace: 'expire', since: mark }) >= 2);
  });

  test('HTTP 500 on list and on watch is retried with backoff, never fatal', async () => {
    const mark = cluster.emu.core.log.mark();
    const faults = cluster.emu.core.faults;
    await survives(
      'errors',
      async (c) => {
        c.emu.core.faults.addError({
          match: { verb: 'watch', namespace: 'errors' },
          code: 500,
          count: 3,
        });
        c.emu.core.watches.drop({ namespace: 'errors' });
        await eventually(
          'the watch to be retried',
          () =>
            c.emu.core.log.count({ verb: 'watch', namespace: 'errors', code: 500, since: mark }) >=
            1,
        );
      },
      () => faults.addError({ match: { verb: 'list', namespace: 'errors' }, code: 500, count: 3 }),
    );
    const log = cluster.emu.core.log;
    assert.equal(log.count({ verb: 'list', namespace: 'errors', code: 500, since: mark }), 3);
    assert.ok(log.count({ verb: 'watch', namespace: 'errors', code: 500, since: mark }) >= 1);
  });

  test('slow API responses only delay delivery', async () => {
    await survives('slow', (c) =>
      c.emu.core.faults.addLatency({ match: { namespace: 'slow' }, fixedMs: 300 }),
    );
  });

  test('random faults during a stream of writes: every final state is delivered', async () => {
    const ns = 'chaos';
    const api = cluster.backupJobs;
    const core = cluster.emu.core;
    await cluster.createNamespace(ns);
    const inf = informer(cluster, { namespaces: [ns] });
    const seen = new Delivered();
    inf.addEventHandler(seen.handler());
    inf.start();
    // One latency rule at a time: rules add up, and a growing pile of them would time writes out.
    let latency: number | undefined;
    const faults: (() => void)[] = [
      () => core.watches.drop({ namespace: ns }),
      () => core.watches.stall({ namespace: ns }),
      () => core.watches.expire({ namespace: ns }),
      () => {
        core.faults.addError({ match: { verb: 'watch', namespace: ns }, code: 500, count: 2 });
        core.watches.drop({ namespace: ns });
      },
      () => {
        core.faults.addError({ match: { verb: 'list', namespace: ns }, code: 500, count: 2 });
        core.watches.expire({ namespace: ns });
      },
      () => {
        if (latency !== undefined) core.faults.remove(latency);
        latency = core.faults.addLatency({ match: { namespace: ns }, fixedMs: 50, jitterMs: 100 });
      },
    ];
    let writing = true;
    const injector = (async () => {
      for (let i = 0; writing; i++) {
        faults[i % faults.length]!();
        await new Promise((resolve) => setTimeout(resolve, 150));
      }
    })();
    try {
      await writeWhileFaulty();
      const server = only(`${ns}/`);
      await eventually(
        () => `the delivered events to match the server; delivered:\n${seen.events.join('\n')}`,
        async () => seen.matches(server(await api.versions())),
      );
    } finally {
      await inf.stop();
    }

    async function writeWhileFaulty(): Promise<void> {
      try {
        const live = new Set<string>();
        for (let i = 0; i < 150; i++) {
          const name = `o${i % 12}`;
          if (!live.has(name)) {
            await api.create(ns, name);
            live.add(name);
          } else if (i % 5 === 0) {
            await api.delete(ns, name);
            live.delete(name);
          } else {
            await api.patch(ns, name, { metadata: { labels: { step: String(i) } } });
          }
        }
      } finally {
        writing = false;
        await injector;
        core.faults.clear();
      }
    }
  });
});

function only(prefix: string) {
  return (all: Map<string, string>) => new Map([...all].filter(([key]) => key.startsWith(prefix)));
}
