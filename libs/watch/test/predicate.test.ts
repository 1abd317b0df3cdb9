import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import {
  createdByOther,
  statusWrittenByOther,
  type KubeObject,
  type ManagedFieldsEntry,
  type ObjectMeta,
} from '#kube';
import { backupJobUpdatePredicate, cronJobUpdatePredicate } from '../src/predicate.js';

const OPERATOR = 'backupjob-operator';
const passes = backupJobUpdatePredicate(OPERATOR);

const base: ObjectMeta = {
  name: 'mysql-daily',
  namespace: 'ops',
  resourceVersion: '10',
  generation: 3,
  labels: { team: 'db' },
  annotations: { note: 'x' },
  finalizers: ['backup.ops.example.com/finalizer'],
  ownerReferences: [],
  managedFields: [
    { manager: 'kubectl-client-side-apply', operation: 'Update', time: '2026-12-02T10:00:00Z' },
    { manager: OPERATOR, operation: 'Update', subresource: 'status', time: '2026-12-02T10:00:01Z' },
  ],
};

function obj(meta: Partial<ObjectMeta> = {}, status?: unknown): KubeObject {
  return { metadata: { ...base, ...meta }, ...(status ? { status } : {}) } as KubeObject;
}

function statusEntry(manager: string, time: string): ManagedFieldsEntry {
  return { manager, operation: 'Update', subresource: 'status', time };
}

describe('BackupJob update predicate', () => {
  test('passes when the spec changed (generation moved)', () => {
    assert.equal(passes(obj(), obj({ generation: 4, resourceVersion: '11' })), true);
  });

  test('passes when deletion starts', () => {
    assert.equal(
      passes(obj(), obj({ deletionTimestamp: '2026-12-02T10:05:00Z', resourceVersion: '11' })),
      true,
    );
  });

  test('passes when labels, annotations or ownerReferences change', () => {
    const changes: Partial<ObjectMeta>[] = [
      { labels: { team: 'web' } },
      { labels: { team: 'db', extra: 'y' } },
      { annotations: {} },
      { ownerReferences: [{ apiVersion: 'v1', kind: 'ConfigMap', name: 'c', uid: 'u' }] },
    ];
    for (const change of changes) {
      assert.equal(
        passes(obj(), obj({ ...change, resourceVersion: '11' })),
        true,
        JSON.stringify(change),
      );
    }
  });

  test('passes when someone else changes the finalizers; drops the operator adding its own', () => {
    const byUser = obj({
      finalizers: [],
      resourceVersion: '11',
      managedFields: [
        { manager: 'kubectl-edit', operation: 'Update', time: '2026-12-02T10:02:00Z' },
        ...base.managedFields!,
      ],
    });
    assert.equal(passes(obj(), byUser), true);
    const byOperator = obj({
      finalizers: [...base.finalizers!, 'other'],
      resourceVersion: '11',
      managedFields: [
        ...base.managedFields!,
        { manager: OPERATOR, operation: 'Update', time: '2026-12-02T10:02:00Z' },
      ],
    });
    assert.equal(passes(obj(), byOperator), false);
  });

  test("drops the operator's own status writes, however the status changed", () => {
    const old = obj({}, { ready: false });
    const updated = obj(
      {
        resourceVersion: '11',
        managedFields: [base.managedFields![0]!, statusEntry(OPERATOR, '2026-12-02T10:03:00Z')],
      },
      { ready: true, observedGeneration: 3 },
    );
    assert.equal(passes(old, updated), false);
  });

  test('passes when someone else writes the status subresource', () => {
    const tampered = obj(
      {
        resourceVersion: '11',
        managedFields: [
          ...base.managedFields!,
          statusEntry('kubectl-edit', '2026-12-02T10:04:00Z'),
        ],
      },
      { ready: false },
    );
    assert.equal(passes(obj(), tampered), true);
  });

  test('passes again when the same foreign manager writes the status later', () => {
    const first = obj({
      managedFields: [...base.managedFields!, statusEntry('kubectl-edit', '2026-12-02T10:04:00Z')],
    });
    const second = obj({
      resourceVersion: '12',
      managedFields: [...base.managedFields!, statusEntry('kubectl-edit', '2026-12-02T10:09:00Z')],
    });
    assert.equal(passes(first, second), true);
  });

  test('drops the operator taking status fields back from a foreign manager', () => {
    const foreign = statusEntry('kubectl-edit', '2026-12-02T10:04:00Z');
    const before = obj({ managedFields: [...base.managedFields!, foreign] });
    // The operator's write removed the foreign entry (its fields now belong to the operator).
    const after = obj({
      resourceVersion: '12',
      managedFields: [base.managedFields![0]!, statusEntry(OPERATOR, '2026-12-02T10:10:00Z')],
    });
    assert.equal(statusWrittenByOther(OPERATOR)(before, after), false);
  });

  test('drops an update that changed only the resourceVersion (e.g. managedFields of the main resource)', () => {
    assert.equal(passes(obj(), obj({ resourceVersion: '11' })), false);
  });
});

describe('CronJob update predicate', () => {
  const cronJobPasses = cronJobUpdatePredicate(OPERATOR);
  const created: ObjectMeta = {
    name: 'mysql-daily-backup',
    namespace: 'ops',
    resourceVersion: '20',
    ownerReferences: [
      { apiVersion: 'ops.example.com/v1alpha1', kind: 'BackupJob', name: 'mysql-daily', uid: 'u1' },
    ],
    managedFields: [{ manager: OPERATOR, operation: 'Update', time: '2026-12-02T10:00:00Z' }],
  };
  const cronJob = (meta: Partial<ObjectMeta> = {}): KubeObject => ({
    metadata: { ...created, ...meta },
  });

  test("drops the operator's own writes: they would only re-run the reconcile that made them", () => {
    const own = cronJob({
      resourceVersion: '21',
      managedFields: [{ manager: OPERATOR, operation: 'Update', time: '2026-12-02T10:05:00Z' }],
    });
    assert.equal(cronJobPasses(cronJob(), own), false);
  });

  test('passes an edit by someone else and the CronJob controller writing status', () => {
    for (const entry of [
      { manager: 'kubectl-edit', operation: 'Update', time: '2026-12-02T10:05:00Z' },
      {
        manager: 'kube-controller-manager',
        operation: 'Update',
        subresource: 'status',
        time: '2026-12-02T10:05:00Z',
      },
    ]) {
      const after = cronJob({
        resourceVersion: '21',
        managedFields: [...created.managedFields!, entry],
      });
      assert.equal(cronJobPasses(cronJob(), after), true, entry.manager);
    }
  });

  test('passes deletion, moved owners, and any update from a server without managedFields', () => {
    assert.equal(
      cronJobPasses(cronJob(), cronJob({ deletionTimestamp: '2026-12-02T10:05:00Z' })),
      true,
    );
    assert.equal(cronJobPasses(cronJob(), cronJob({ ownerReferences: [] })), true);
    const bare = { resourceVersion: '21', managedFields: undefined };
    assert.equal(cronJobPasses(cronJob({ managedFields: undefined }), cronJob(bare)), true);
  });

  test('a create passes unless only the operator wrote it: it knows what it made', () => {
    const createdPasses = createdByOther(OPERATOR);
    assert.equal(createdPasses(cronJob()), false);
    const edited = [
      ...created.managedFields!,
      { manager: 'kubectl-edit', operation: 'Update', time: '2026-12-02T10:00:00Z' },
    ];
    assert.equal(createdPasses(cronJob({ managedFields: edited })), true);
    assert.equal(createdPasses(cronJob({ managedFields: undefined })), true);
  });
});
