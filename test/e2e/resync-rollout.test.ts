import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { stringify } from 'yaml';
import {
  eventually,
  type ManagedProcess,
  type OperatorSystem,
  startOperatorSystem,
} from '#testing';
import { backupJobManifest, capture, expectOk, getCronJob, isConverged } from './support.js';

// A resync skips the keys the workers proved converged. The proof holds only under the
// configuration it was made with: workers rolled out with another one must see every key again
// at the next resync, or a new backup image would wait for each key's RequeueAfter (hours).

const NAMES = ['nightly', 'weekly'];
const NEW_IMAGE = 'registry.example.com/backup:2.0';

let sys: OperatorSystem;
let watcher: ManagedProcess;

before(async () => {
  sys = await startOperatorSystem({
    watchers: 1,
    workers: 1,
    env: { RESYNC_PERIOD: '3s' },
    emulator: { namespaces: ['ops'], controllers: { jobs: true, cronJobs: { schedule: false } } },
  });
  watcher = sys.watchers[0]!;
});

after(async () => {
  await sys?.stop();
});

const rechecks = (from: number) =>
  watcher.lines
    .slice(from)
    .filter((l) => l.includes('"msg":"rechecked unchanged keys"'))
    .map((l) => JSON.parse(l) as { converged: number; sent: number });

const imageOf = (name: string) =>
  (
    getCronJob(sys, 'ops', name)?.spec as {
      jobTemplate: { spec: { template: { spec: { containers: { image: string }[] } } } };
    }
  ).jobTemplate.spec.template.spec.containers[0]?.image;

test('workers rolled out with a new configuration: the next resync runs every key again', async () => {
  const manifests = NAMES.map((n) => stringify(backupJobManifest('ops', n))).join('---\n');
  expectOk(await sys.kubectl(['apply', '-f', '-'], { input: manifests }), 'apply');
  for (const name of NAMES) {
    await eventually(`${name} converged`, () => isConverged(sys, 'ops', name));
  }
  const skipping = watcher.lines.length;
  await eventually(
    'a resync to skip every key',
    () => rechecks(skipping).some((r) => r.converged === NAMES.length),
    30_000,
  );
  const oldImage = imageOf(NAMES[0]!);
  assert.notEqual(oldImage, NEW_IMAGE);

  // The rollout: the old worker goes, one with another backup image comes.
  await sys.workers[0]!.stop('SIGTERM');
  const rolledOut = watcher.lines.length;
  await sys.startWorker({ BACKUP_IMAGE: NEW_IMAGE });
  for (const name of NAMES) {
    await eventually(`${name}'s CronJob to use the new image`, () => imageOf(name) === NEW_IMAGE);
  }
  const after = rechecks(rolledOut);
  capture(
    'rollout: resyncs after the new worker started',
    after.map((r) => `${r.converged} skipped, ${r.sent} sent`).join(' | '),
  );
  assert.ok(
    after.some((r) => r.sent === NAMES.length),
    'a resync sent every key, its marks made under the old configuration',
  );
});
