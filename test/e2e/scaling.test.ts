import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { API_VERSION, KIND } from '#api';
import {
  eventually,
  overlappingRuns,
  reconcileRuns,
  startOperatorSystem,
  type ManagedProcess,
  type OperatorSystem,
  type ReconcileRun,
} from '#testing';
import { backupJobManifest, getBackupJob, isConverged } from './support.js';

// `kubectl scale deploy/backup-operator-worker --replicas=4` and back to 1, while BackupJobs are
// created and edited: every object ends converged and no key is ever reconciled by two workers
// at once (checked from the workers' own reconcile log lines).

const COUNT = 40;
const names = Array.from({ length: COUNT }, (_, i) => `db-${String(i).padStart(2, '0')}`);

let sys: OperatorSystem;

before(async () => {
  sys = await startOperatorSystem({
    watchers: 1,
    workers: 1,
    env: { QUEUE_LOCK_DURATION: '10s', WORKER_CONCURRENCY: '4' },
    emulator: { namespaces: ['ops'] },
  });
});

after(async () => {
  await sys?.stop();
});

function editAll(round: number): void {
  for (const [i, name] of names.entries()) {
    sys.emulator.objects.patch(API_VERSION, KIND, name, 'ops', {
      spec: { schedule: `${round} ${i % 24} * * *`, retentionDays: 7 + round },
    });
  }
}

async function started(proc: ManagedProcess): Promise<void> {
  await proc.waitForLine((l) => l.includes('"msg":"consuming keys"'));
}

function describeOverlaps(runs: readonly ReconcileRun[]): string[] {
  const span = (r: ReconcileRun) => `${r.worker} [${r.start}, ${r.end}]`;
  return overlappingRuns(runs).map(([a, b]) => `${a.key}: ${span(a)} and ${span(b)}`);
}

test('workers scale 1 → 4 → 1 while BackupJobs change; all converge, no key runs twice at once', async () => {
  for (const name of names) sys.emulator.objects.create(backupJobManifest('ops', name));
  editAll(1);

  const added = [await sys.startWorker(), await sys.startWorker(), await sys.startWorker()];
  await Promise.all(added.map(started));
  editAll(2);
  editAll(3);
  await eventually(
    'the added workers to take keys',
    () => added.every((w) => w.lines.some((l) => l.includes('"msg":"reconcile started"'))),
    30_000,
  );

  editAll(4);
  await Promise.all(added.map((w) => w.stop('SIGTERM')));
  const stoppedAt = new Map(added.map((w) => [w, Date.now()]));
  editAll(5);

  await eventually(
    'every BackupJob to converge on its last spec',
    () => names.every((n) => isConverged(sys, 'ops', n)),
    45_000,
  ).catch((err: unknown) => {
    const stuck = names.filter((n) => !isConverged(sys, 'ops', n));
    const dead = [...sys.watchers, ...sys.workers.slice(0, 1)].filter((p) => !p.running);
    throw new Error(
      `${String(err)}; not converged: ${stuck.join(', ')}; exited: ${dead.map((p) => `${p.name}: ${p.lines.at(-1)}`).join('; ') || 'none'}`,
    );
  });
  for (const [i, name] of names.entries()) {
    const bj = getBackupJob(sys, 'ops', name)!;
    assert.equal(bj.spec.schedule, `5 ${i % 24} * * *`);
    assert.equal(bj.status?.observedGeneration, bj.metadata.generation);
  }

  const runs = reconcileRuns(sys.workers, stoppedAt);
  const workersUsed = new Set(runs.map((r) => r.worker));
  assert.equal(workersUsed.size, 4, `reconciles ran on ${[...workersUsed].join(', ')}`);
  assert.ok(runs.length >= COUNT, `${runs.length} reconciles`);
  assert.deepEqual(describeOverlaps(runs), []);
});
