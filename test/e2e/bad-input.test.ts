import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { KubeObject } from '#apiserver-emulator';
import { API_VERSION, KIND } from '#api';
import { loadWorkerConfig } from '#config';
import { queueOptions } from '#runtime';
import { WorkQueue } from '#queue';
import {
  backupJobCrdDocument,
  condition,
  eventually,
  jsonLines,
  type OperatorSystem,
  startOperatorSystem,
} from '#testing';
import {
  backupJobManifest,
  getBackupJob,
  isConverged,
  metricValue,
  scrapeMetrics,
} from './support.js';

// Input the operator cannot trust: BackupJobs the CRD's validation never saw (written under a
// looser CRD), a status of the wrong types, huge objects, and queue keys anyone with access to
// Redis wrote. None may crash a process or hold up other keys; each gets a status reason or a
// log line; every process is still ready afterwards. Real processes, real Redis, RBAC enforced.

const NS = 'ops';
let sys: OperatorSystem;

before(async () => {
  sys = await startOperatorSystem({
    rbac: true,
    watchers: 1,
    workers: 2,
    emulator: { namespaces: [NS], controllers: { jobs: true, cronJobs: { schedule: false } } },
  });
  loosenCrd();
});

after(async () => {
  await sys?.stop();
});

/** The BackupJob CRD as an older, looser version might have been: spec and status unchecked. */
function loosenCrd(): void {
  const name = backupJobCrdDocument().metadata.name!;
  const crd = sys.emulator.objects.get('apiextensions.k8s.io/v1', 'CustomResourceDefinition', name);
  assert.ok(crd);
  const spec = crd.spec as {
    versions: { schema: { openAPIV3Schema: Record<string, unknown> } }[];
  };
  for (const version of spec.versions) {
    const loose = { 'x-kubernetes-preserve-unknown-fields': true };
    version.schema.openAPIV3Schema = {
      type: 'object',
      properties: { spec: loose, status: loose },
    };
  }
  sys.emulator.objects.update(crd);
}

function create(name: string, spec: unknown, metadata: Record<string, unknown> = {}): void {
  sys.emulator.objects.create({
    apiVersion: API_VERSION,
    kind: KIND,
    metadata: { name, namespace: NS, ...metadata },
    spec,
  } as KubeObject);
}

const MALFORMED: [string, unknown, RegExp][] = [
  ['empty-spec', {}, /spec\.target: is required/],
  ['string-spec', 'daily at two', /spec: must be an object, not string/],
  [
    'wrong-types',
    { target: 42, schedule: ['0', '2'], retentionDays: 'seven', suspend: 'yes' },
    /spec\.target: must be a string/,
  ],
  [
    'bad-references',
    { target: 'db', schedule: '@daily', secretRef: 'db', image: 42, storage: [] },
    /spec\.image: must be a string/,
  ],
  ['huge-target', { target: 'x'.repeat(1 << 20), schedule: '@daily' }, /at most 253 characters/],
];

const BAD_KEYS = [
  'no-slash',
  'a/b/c',
  'UPPER/case',
  '/name-only',
  'namespace-only/',
  `${NS}/bad\nname`,
  `${NS}/${'k'.repeat(100_000)}`,
];

test('bad input never stops the operator', async (t) => {
  for (const [name, spec] of MALFORMED) create(name, spec);
  create('long-annotations', backupJobManifest(NS, 'x').spec, {
    annotations: { 'example.com/blob': 'y'.repeat(512 * 1024) },
  });
  create('bad-status', backupJobManifest(NS, 'x').spec);
  sys.emulator.objects.patch(
    API_VERSION,
    KIND,
    'bad-status',
    NS,
    {
      status: {
        conditions: 'broken',
        ready: 'no',
        observedGeneration: 'x',
        lastBackupTime: 'never',
      },
    },
    'status',
  );
  const queue = new WorkQueue(
    queueOptions(loadWorkerConfig({ REDIS_URL: sys.redisUrl, QUEUE_SHARDS: '4' })),
  );
  try {
    for (const key of BAD_KEYS) await queue.add(key);
  } finally {
    await queue.close();
  }
  create('healthy', backupJobManifest(NS, 'x').spec);

  await t.test('a well-formed BackupJob created after them converges', async () => {
    await eventually('healthy to converge', () => isConverged(sys, NS, 'healthy'), 60_000);
  });

  for (const [name, , message] of MALFORMED) {
    await t.test(`${name}: Ready=False InvalidSpec naming the problem, no CronJob`, async () => {
      const ready = await eventually(`${name} to be reported`, () => {
        const c = condition(getBackupJob(sys, NS, name), 'Ready');
        return c?.reason === 'InvalidSpec' && c;
      });
      assert.equal(ready.status, 'False');
      assert.match(ready.message ?? '', message);
      assert.equal(
        sys.emulator.objects
          .list('batch/v1', 'CronJob', NS)
          .some((c) => c.metadata.name?.startsWith(name)),
        false,
      );
    });
  }

  await t.test('a huge annotation does not matter: the BackupJob converges', async () => {
    await eventually(
      'long-annotations to converge',
      () => isConverged(sys, NS, 'long-annotations'),
      60_000,
    );
  });

  await t.test('a status of the wrong types is replaced by a sound one', async () => {
    await eventually('bad-status to converge', () => isConverged(sys, NS, 'bad-status'), 60_000);
    const status = getBackupJob(sys, NS, 'bad-status')?.status as Record<string, unknown>;
    assert.equal(status.ready, true);
    assert.ok(Array.isArray(status.conditions));
    assert.equal(status.lastBackupTime, undefined);
  });

  await t.test('every bad queue key is dropped with a log line and counted', async () => {
    const dropped = () =>
      jsonLines(...sys.workers).filter(
        (l) => l.msg === 'dropped a queue key that is not namespace/name',
      );
    await eventually('a log line per bad key', () => dropped().length >= BAD_KEYS.length);
    const logged = new Set(dropped().map((l) => l.keyLength));
    for (const key of BAD_KEYS)
      assert.ok(logged.has(key.length), `no log line for a key of ${key.length} chars`);
    let counted = 0;
    for (const worker of sys.workers) {
      counted += metricValue(
        await scrapeMetrics(sys, worker),
        'backupjob_operator_invalid_keys_total',
      );
    }
    assert.equal(counted, BAD_KEYS.length);
  });

  await t.test('every process is still running and ready', async () => {
    for (const proc of [...sys.watchers, ...sys.workers]) {
      assert.ok(proc.running, `${proc.name} exited`);
      const res = await fetch(`http://127.0.0.1:${sys.portsOf(proc).health}/readyz`);
      assert.equal(res.status, 200, `${proc.name} /readyz: ${await res.text()}`);
    }
  });
});
