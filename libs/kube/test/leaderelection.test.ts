import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { eventually, type ManagedProcess, startProcess } from '#testing';
import { LeaderElector, type StoppedReason } from '../src/leaderelection.js';
import { LeaseLock } from '../src/resourcelock.js';
import { type KubeCluster, startKubeCluster } from '#testing/kube-cluster';

// Short timings keep the suite quick; their ratios are client-go's (15 s / 10 s / 2 s).
const FAST = { leaseDurationMs: 1500, renewDeadlineMs: 1000, retryPeriodMs: 200 };

interface Candidate {
  readonly elector: LeaderElector;
  readonly log: string[];
  readonly run: Promise<StoppedReason>;
  startedAt?: number;
  stoppedAt?: number;
}

describe('LeaderElector against the API emulator', () => {
  let cluster: KubeCluster;
  let leaseSeq = 0;
  before(async () => {
    cluster = await startKubeCluster();
  });
  after(() => cluster.stop());

  function candidate(identity: string, lease: string, timings = FAST): Candidate {
    const log: string[] = [];
    const c: Partial<Candidate> & { log: string[] } = { log };
    const elector = new LeaderElector({
      rest: cluster.restAs(identity),
      namespace: 'ops',
      name: lease,
      identity,
      ...timings,
      eventController: 'test-operator',
      callbacks: {
        onStartedLeading: () => {
          c.startedAt = performance.now();
          log.push('leading');
        },
        onStoppedLeading: (reason) => {
          c.stoppedAt = performance.now();
          log.push(`stopped:${reason}`);
        },
      },
    });
    return Object.assign(c, { elector, run: elector.run() }) as Candidate;
  }

  const holderOf = async (lease: string) =>
    (await new LeaseLock(cluster.rest, 'ops', lease).get({ timeoutMs: 2000 }))?.spec
      ?.holderIdentity ?? '';

  test('of two candidates exactly one leads, and the Lease names it', async () => {
    const lease = `lease-${leaseSeq++}`;
    const a = candidate('cand-a', lease);
    const b = candidate('cand-b', lease);
    try {
      const leaders = () => [a, b].filter((c) => c.elector.isLeader);
      await eventually('exactly one leader', () => leaders().length === 1);
      // Keep watching for a few lease durations: never two, never none.
      const until = performance.now() + 2 * FAST.leaseDurationMs;
      while (performance.now() < until) {
        assert.equal(leaders().length, 1);
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      const leader = leaders()[0]!.elector.identity;
      assert.equal(await holderOf(lease), leader);
      assert.equal(b.elector.leader, a.elector.leader);
      // As client-go, the leader records an Event on the Lease.
      await eventually('a leader election Event', async () => {
        const events = await cluster.rest.request<{
          items: { note?: string; regarding?: { name?: string } }[];
        }>({
          path: '/apis/events.k8s.io/v1/namespaces/ops/events',
        });
        return events.items.some(
          (e) => e.regarding?.name === lease && e.note === `${leader} became leader`,
        );
      });
    } finally {
      await Promise.all([a.elector.stop(), b.elector.stop()]);
    }
  });

  test('a leader that cannot renew stops at once; the other takes over after the lease expires', async () => {
    const lease = `lease-${leaseSeq++}`;
    const a = candidate('cut-a', lease);
    await eventually('the first candidate to lead', () => a.elector.isLeader);
    const b = candidate('cut-b', lease);
    const faultId = cluster.emu.core.faults.addError({
      match: { user: 'cut-a', resource: 'leases' },
      code: 500,
    });
    try {
      assert.equal(await a.run, 'lost');
      await eventually('the standby to take over', () => b.elector.isLeader);
      assert.deepEqual(a.log, ['leading', 'stopped:lost']);
      // No overlap: the old leader had stopped before the new one started.
      assert.ok(a.stoppedAt! < b.startedAt!);
      assert.equal(await holderOf(lease), 'cut-b');
    } finally {
      cluster.emu.core.faults.remove(faultId);
      await Promise.all([a.elector.stop(), b.elector.stop()]);
    }
  });

  test('a leader whose renewals are slow but within the request timeout keeps its lease', async () => {
    const lease = `lease-${leaseSeq++}`;
    // A 3 s request timeout (renewDeadline / 2). Each renewal takes 2.5 s: slow, yet it succeeds.
    // The renew deadline counts from the start of the last successful renewal, so a renewal that
    // starts only a retry period after the previous one ended has 6 - 2.5 - 2 = 1.5 s left and is
    // cut short; starting it a retry period after the previous one began leaves 3.5 s.
    const timings = { leaseDurationMs: 8000, renewDeadlineMs: 6000, retryPeriodMs: 2000 };
    const a = candidate('slow-a', lease, timings);
    await eventually('the candidate to lead', () => a.elector.isLeader);
    const slow = cluster.emu.core.faults.addLatency({
      match: { user: 'slow-a', resource: 'leases' },
      fixedMs: 2500,
    });
    try {
      const mark = cluster.emu.core.log.mark();
      const renewals = () =>
        cluster.emu.core.log.count({ resource: 'leases', user: 'slow-a', since: mark, code: 200 });
      await eventually(
        'five slow renewals, or the leader giving up',
        () => a.log.length > 1 || renewals() >= 5,
        30_000,
      );
      assert.deepEqual(a.log, ['leading'], 'still leading after five slow renewals');
      assert.equal(await holderOf(lease), 'slow-a');
    } finally {
      cluster.emu.core.faults.remove(slow);
      await a.elector.stop();
    }
  });

  test('stop() releases the Lease and a standby takes it without waiting for expiry', async () => {
    const lease = `lease-${leaseSeq++}`;
    // A long lease and a short retry period: only a release explains a quick handover.
    const timings = { leaseDurationMs: 20_000, renewDeadlineMs: 10_000, retryPeriodMs: 200 };
    const a = candidate('rel-a', lease, timings);
    await eventually('the first candidate to lead', () => a.elector.isLeader);
    const b = candidate('rel-b', lease, timings);
    await eventually('the standby to see the leader', () => b.elector.leader === 'rel-a');
    try {
      const released = performance.now();
      await a.elector.stop();
      assert.equal(await a.run, 'stopped');
      await eventually(
        'the standby to take over',
        () => b.elector.isLeader,
        timings.leaseDurationMs * 2,
      );
      assert.ok(
        b.startedAt! - released < timings.leaseDurationMs / 2,
        'handover waited for the lease to expire instead of using the release',
      );
      assert.deepEqual(a.log, ['leading', 'stopped:stopped']);
    } finally {
      await b.elector.stop();
    }
  });
});

describe('LeaderElector in separate processes', () => {
  let cluster: KubeCluster;
  const processes: ManagedProcess[] = [];
  before(async () => {
    cluster = await startKubeCluster();
  });
  after(async () => {
    await Promise.all(processes.map((p) => p.stop('SIGKILL')));
    await cluster.stop();
  });

  function spawnCandidate(identity: string, lease: string): ManagedProcess {
    const token = `token-${identity}`;
    cluster.emu.core.authn.addStaticToken(token, {
      username: identity,
      groups: ['system:masters'],
    });
    const p = startProcess({
      name: identity,
      command: process.execPath,
      args: [new URL('./elector-process.js', import.meta.url).pathname],
      env: {
        KUBECONFIG_TEXT: cluster.emu.kubeconfigForToken(token, identity),
        IDENTITY: identity,
        LEASE_NAMESPACE: 'ops',
        LEASE_NAME: lease,
        LEASE_MS: String(FAST.leaseDurationMs),
        RENEW_MS: String(FAST.renewDeadlineMs),
        RETRY_MS: String(FAST.retryPeriodMs),
      },
    });
    processes.push(p);
    return p;
  }

  const leading = (line: string) => line.includes('"event":"leading"');

  test('SIGKILL of the leader: the standby leads once the lease expires', async () => {
    const a = spawnCandidate('proc-a', 'lease-kill');
    await a.waitForLine(leading);
    const b = spawnCandidate('proc-b', 'lease-kill');
    await b.waitForLine(/"event":"started"/);
    await a.stop('SIGKILL');
    await b.waitForLine(leading);
  });

  test('a paused leader (split brain): the standby takes over, the old leader learns it lost and exits', async () => {
    const a = spawnCandidate('pause-a', 'lease-pause');
    await a.waitForLine(leading);
    const b = spawnCandidate('pause-b', 'lease-pause');
    await b.waitForLine(/"event":"started"/);
    a.child.kill('SIGSTOP');
    await b.waitForLine(leading);
    // Resumed, the old leader believes it leads until its next renewal shows otherwise; this
    // window is the split brain the queue's deduplication makes harmless.
    a.child.kill('SIGCONT');
    await a.waitForLine(/"event":"stopped","identity":"pause-a","reason":"lost"/);
    assert.equal(await a.exited, 1);
    assert.equal(b.running, true);
  });
});
