import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { API_VERSION, KIND } from '#api';
import { startOperatorSystem, type OperatorSystem, type ManagedProcess } from '#testing';
import {
  backupJobManifest,
  eventually,
  getBackupJob,
  isConverged,
  jsonLines,
  type LogLine,
} from './support.js';

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

interface Run {
  key: string;
  worker: string;
  start: number;
  end: number;
}

/** One interval per reconcileID: from its first log line to its last. */
function reconcileRuns(lines: LogLine[]): Run[] {
  const runs = new Map<string, Run>();
  for (const l of lines) {
    const id = l.reconcileID;
    if (typeof id !== 'string' || typeof l.key !== 'string') continue;
    const t = Date.parse(l.time);
    const run = runs.get(id);
    if (run) run.end = Math.max(run.end, t);
    else runs.set(id, { key: l.key, worker: String(l.process), start: t, end: t });
  }
  return [...runs.values()];
}

function overlaps(runs: Run[]): string[] {
  const byKey = new Map<string, Run[]>();
  for (const r of runs) byKey.set(r.key, [...(byKey.get(r.key) ?? []), r]);
  const found: string[] = [];
  for (const [key, list] of byKey) {
    list.sort((a, b) => a.start - b.start);
    let latest = list[0]!;
    for (const r of list.slice(1)) {
      if (r.start < latest.end) {
        found.push(
          `${key}: ${latest.worker} [${latest.start}, ${latest.end}] and ${r.worker} [${r.start}, ${r.end}]`,
        );
      }
      if (r.end > latest.end) latest = r;
    }
  }
  return found;
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

  const runs = reconcileRuns(jsonLines(...sys.workers));
  const workersUsed = new Set(runs.map((r) => r.worker));
  assert.equal(workersUsed.size, 4, `reconciles ran on ${[...workersUsed].join(', ')}`);
  assert.ok(runs.length >= COUNT, `${runs.length} reconciles`);
  assert.deepEqual(overlaps(runs), []);
});

test('the overlap check itself: two runs of one key that intersect are reported, others are not', () => {
  const run = (key: string, worker: string, start: number, end: number): Run => ({
    key,
    worker,
    start,
    end,
  });
  assert.deepEqual(
    overlaps([run('a', 'w0', 0, 10), run('a', 'w1', 10, 20), run('b', 'w1', 5, 8)]),
    [],
  );
  assert.equal(
    overlaps([run('a', 'w0', 0, 10), run('b', 'w1', 1, 2), run('a', 'w1', 9, 12)]).length,
    1,
  );
  assert.equal(
    overlaps([run('a', 'w0', 0, 30), run('a', 'w1', 5, 6), run('a', 'w2', 20, 40)]).length,
    2,
  );
});
