import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { BackupJob } from '#api';
import { condition } from '#testing';
import type { Action } from '../src/actions.js';
import { grantRecheckDelay } from '../src/permitted.js';
import type { ReconcileInput } from '../src/world.js';
import { reconcilerConfig } from '../src/config.js';
import {
  T0,
  applyActions,
  backupJob,
  cleanupJob,
  config,
  job,
  minutes,
  run,
  storedCronJobFor,
  types,
} from './support.js';

/** Without the periodic cap, so the computed due time itself is visible. */
const uncapped = reconcilerConfig({ ...config, maxRequeueMs: Number.MAX_SAFE_INTEGER });
const GRACE = (config.startingDeadlineSeconds + config.activeDeadlineSeconds) * 1000;

/** Runs the reconciler, applies its actions, and returns the world plus what was done. */
function step(input: ReconcileInput) {
  const output = run(input);
  return { ...output, next: applyActions(input, output.actions) };
}

function converged(input: ReconcileInput): ReconcileInput {
  let world = input;
  for (let i = 0; i < 5; i++) {
    const { actions, next } = step(world);
    if (actions.length === 0) return world;
    world = next;
  }
  assert.fail('did not converge within 5 reconciles');
}

function status(input: ReconcileInput) {
  return input.backupJob?.status ?? {};
}

function withSpec(input: ReconcileInput, spec: Partial<BackupJob['spec']>): ReconcileInput {
  const bj = input.backupJob as BackupJob;
  const generation = (bj.metadata.generation ?? 0) + 1;
  return {
    ...input,
    backupJob: { ...bj, metadata: { ...bj.metadata, generation }, spec: { ...bj.spec, ...spec } },
  };
}

function eventReasons(actions: readonly Action[]): string[] {
  return actions.flatMap((a) => (a.type === 'emitEvent' ? [a.event.reason] : []));
}

describe('reconcile: the BackupJob is gone', () => {
  test('done, nothing to do (children go through ownerReferences)', () => {
    assert.deepEqual(run({ backupJob: undefined }), { actions: [], result: { kind: 'done' } });
  });
});

describe('reconcile: a new BackupJob', () => {
  const fresh = backupJob({ metadata: { finalizers: undefined } });
  const first = step({ backupJob: fresh, cronJob: undefined, jobs: [], now: T0, config });

  test('adds the finalizer before creating the CronJob, then writes status and an Event', () => {
    assert.deepEqual(types(first.actions), [
      'addFinalizer',
      'createCronJob',
      'event:CronJobCreated',
      'updateStatus',
    ]);
  });

  test('the CronJob is owned, labelled, scheduled and hardened', () => {
    const create = first.actions.find((a) => a.type === 'createCronJob');
    assert.ok(create?.type === 'createCronJob');
    const cj = create.cronJob;
    assert.equal(cj.metadata?.name, 'mysql-daily-backup');
    assert.deepEqual(cj.metadata?.ownerReferences, [
      {
        apiVersion: 'ops.example.com/v1alpha1',
        kind: 'BackupJob',
        name: 'mysql-daily',
        uid: 'uid-bj-1',
        controller: true,
        blockOwnerDeletion: true,
      },
    ]);
    assert.equal(cj.metadata?.labels?.['backup.ops.example.com/backupjob'], 'mysql-daily');
    assert.equal(cj.metadata?.labels?.['app.kubernetes.io/managed-by'], 'backupjob-operator');
    const spec = cj.spec!;
    assert.equal(spec.schedule, '10 2 * * *');
    assert.equal(spec.suspend, false);
    assert.equal(spec.concurrencyPolicy, 'Forbid');
    assert.equal(spec.startingDeadlineSeconds, config.startingDeadlineSeconds);
    assert.equal(spec.successfulJobsHistoryLimit, config.successfulJobsHistoryLimit);
    assert.equal(spec.failedJobsHistoryLimit, config.failedJobsHistoryLimit);
    const jobSpec = spec.jobTemplate.spec!;
    assert.equal(jobSpec.backoffLimit, config.backoffLimit);
    assert.equal(jobSpec.activeDeadlineSeconds, config.activeDeadlineSeconds);
    assert.equal(
      spec.jobTemplate.metadata?.labels?.['backup.ops.example.com/backupjob'],
      'mysql-daily',
    );
    assert.equal(jobSpec.template.metadata?.labels?.['app.kubernetes.io/component'], 'backup');
    const pod = jobSpec.template.spec!;
    assert.equal(pod.restartPolicy, 'Never');
    assert.equal(pod.securityContext?.runAsNonRoot, true);
    assert.equal(pod.securityContext?.seccompProfile?.type, 'RuntimeDefault');
    const [container] = pod.containers;
    assert.equal(container?.image, config.defaultImage);
    assert.deepEqual(container?.securityContext, {
      allowPrivilegeEscalation: false,
      readOnlyRootFilesystem: true,
      runAsNonRoot: true,
      capabilities: { drop: ['ALL'] },
      seccompProfile: { type: 'RuntimeDefault' },
    });
    assert.deepEqual(container?.resources?.requests, config.resources.requests);
    assert.deepEqual(container?.resources?.limits, config.resources.limits);
    const env = Object.fromEntries((container?.env ?? []).map((e) => [e.name, e.value]));
    assert.deepEqual(env, {
      BACKUP_MODE: 'backup',
      BACKUP_TARGET: 'mysql',
      BACKUP_RETENTION_DAYS: '7',
      BACKUP_DESTINATION: '/backups/ops/mysql-daily',
      BACKUP_NAME: 'mysql-daily',
      BACKUP_NAMESPACE: 'ops',
      BACKUP_CREDENTIALS_DIR: '/var/run/secrets/backup',
    });
    assert.deepEqual(pod.volumes?.find((v) => v.name === 'backup-storage')?.persistentVolumeClaim, {
      claimName: 'backup-storage',
    });
    assert.equal(
      pod.volumes?.some((v) => v.secret),
      false,
      'no Secret volume without secretRef',
    );
  });

  test('status: Ready=True with observedGeneration, no backup yet, nothing due yet', () => {
    const s = status(first.next);
    assert.equal(s.ready, true);
    assert.equal(s.observedGeneration, 1);
    assert.equal(s.cronJobName, 'mysql-daily-backup');
    assert.equal(condition(first.next.backupJob, 'Ready')?.status, 'True');
    assert.equal(condition(first.next.backupJob, 'Ready')?.observedGeneration, 1);
    assert.equal(condition(first.next.backupJob, 'BackupSucceeded')?.reason, 'NoBackupYet');
    assert.equal(condition(first.next.backupJob, 'BackupOverdue')?.status, 'Unknown');
  });

  test('requeues for when the first scheduled backup becomes due (02:10 + grace)', () => {
    const due = new Date('2026-05-29T02:10:00Z').getTime() + GRACE;
    assert.deepEqual(first.result, { kind: 'requeueAfter', delayMs: due - T0.getTime() });
  });

  test('a second reconcile of the unchanged world makes zero writes', () => {
    const second = run(first.next);
    assert.deepEqual(second.actions, []);
    assert.deepEqual(second.result, first.result);
  });
});

describe('reconcile: changes to the spec and to the CronJob', () => {
  const base = converged({ backupJob: backupJob(), cronJob: undefined, jobs: [], now: T0, config });
  const later = minutes(30);

  test('a schedule change updates the CronJob; Ready lastTransitionTime does not move', () => {
    const changed = { ...withSpec(base, { schedule: '0 3 * * *' }), now: later };
    const { actions, next } = step(changed);
    assert.deepEqual(types(actions), ['patchCronJob', 'event:CronJobUpdated', 'updateStatus']);
    const update = actions[0];
    assert.ok(update?.type === 'patchCronJob');
    assert.deepEqual(update.fields, ['spec.schedule']);
    assert.deepEqual(update.patch, {
      metadata: { resourceVersion: base.cronJob?.metadata?.resourceVersion },
      spec: { schedule: '0 3 * * *' },
    });
    assert.equal(next.cronJob?.spec?.schedule, '0 3 * * *');
    assert.equal(status(next).observedGeneration, 2);
    assert.equal(condition(next.backupJob, 'Ready')?.observedGeneration, 2);
    assert.equal(
      condition(next.backupJob, 'Ready')?.lastTransitionTime,
      condition(base.backupJob, 'Ready')?.lastTransitionTime,
    );
    assert.deepEqual(run(next).actions, []);
  });

  const specChanges: [
    string,
    Partial<BackupJob['spec']>,
    (input: ReconcileInput) => unknown,
    unknown,
  ][] = [
    ['suspend', { suspend: true }, (w) => w.cronJob?.spec?.suspend, true],
    ['timeZone', { timeZone: 'Europe/Berlin' }, (w) => w.cronJob?.spec?.timeZone, 'Europe/Berlin'],
    [
      'image',
      { image: 'registry.example.com/custom:2' },
      (w) => w.cronJob?.spec?.jobTemplate.spec?.template.spec?.containers[0]?.image,
      'registry.example.com/custom:2',
    ],
    [
      'secretRef',
      { secretRef: { name: 'mysql-creds' } },
      (w) =>
        w.cronJob?.spec?.jobTemplate.spec?.template.spec?.volumes?.find((v) => v.secret)?.secret,
      { secretName: 'mysql-creds', defaultMode: 0o440 },
    ],
    [
      'storage',
      { storage: { claimName: 'nfs', path: 'db/mysql' } },
      (w) =>
        w.cronJob?.spec?.jobTemplate.spec?.template.spec?.containers[0]?.env?.find(
          (e) => e.name === 'BACKUP_DESTINATION',
        )?.value,
      '/backups/db/mysql',
    ],
    [
      'retentionDays',
      { retentionDays: 30 },
      (w) =>
        w.cronJob?.spec?.jobTemplate.spec?.template.spec?.containers[0]?.env?.find(
          (e) => e.name === 'BACKUP_RETENTION_DAYS',
        )?.value,
      '30',
    ],
  ];
  for (const [field, spec, read, expected] of specChanges) {
    test(`a ${field} change reaches the CronJob and then converges`, () => {
      const grants = [
        { resource: 'secrets', name: 'mysql-creds', allowed: true },
        { resource: 'persistentvolumeclaims', name: 'nfs', allowed: true },
      ] as const;
      const { actions, next } = step({ ...withSpec(base, spec), now: later, grants });
      assert.ok(types(actions).includes('patchCronJob'));
      assert.deepEqual(read(next), expected);
      assert.deepEqual(run(next).actions, []);
    });
  }

  test('a deleted CronJob is recreated; status is already right so it is not written', () => {
    const { actions } = step({ ...base, cronJob: undefined, now: later });
    assert.deepEqual(types(actions), ['createCronJob', 'event:CronJobCreated']);
  });

  test('an edited owned field is restored, keeping the read resourceVersion', () => {
    const edited = structuredClone(base.cronJob!);
    edited.spec!.concurrencyPolicy = 'Allow';
    edited.metadata!.resourceVersion = '33';
    const { actions } = step({ ...base, cronJob: edited, now: later });
    assert.deepEqual(types(actions), ['patchCronJob', 'event:CronJobUpdated']);
    const update = actions[0];
    assert.ok(update?.type === 'patchCronJob');
    assert.deepEqual(update.patch, {
      metadata: { resourceVersion: '33' },
      spec: { concurrencyPolicy: 'Forbid' },
    });
  });

  test('a CronJob being deleted is left alone and looked at again soon', () => {
    const going = structuredClone(base.cronJob!);
    going.metadata!.deletionTimestamp = later;
    const { actions, result } = step({ ...base, cronJob: going, now: later });
    assert.deepEqual(actions, []);
    assert.deepEqual(result, { kind: 'requeueAfter', delayMs: config.cleanupPollMs });
  });

  test('suspended: Ready=True reason Suspended, not overdue, no requeue', () => {
    const world = converged({ ...withSpec(base, { suspend: true }), now: later });
    assert.equal(condition(world.backupJob, 'Ready')?.reason, 'Suspended');
    assert.equal(condition(world.backupJob, 'BackupOverdue')?.reason, 'Suspended');
    assert.deepEqual(run(world).result, { kind: 'done' });
  });

  test('a yearly schedule requeues no later than maxRequeueMs', () => {
    const world = converged({ ...withSpec(base, { schedule: '@yearly' }), now: later });
    assert.deepEqual(run(world).result, { kind: 'requeueAfter', delayMs: config.maxRequeueMs });
  });
});

describe('reconcile: invalid spec', () => {
  const invalid: [string, Partial<BackupJob['spec']>, RegExp][] = [
    ['six fields', { schedule: '0 10 2 * * *' }, /expected 5 fields/],
    ['L', { schedule: '0 0 L * *' }, /day of month/],
    ['day of week 7', { schedule: '0 0 * * 7' }, /outside 0-6/],
    ['never fires', { schedule: '0 0 31 2 *' }, /never matches a date/],
    ['unknown zone', { timeZone: 'Mars/Olympus' }, /spec.timeZone: unknown time zone/],
    ['both wrong', { schedule: 'H * * * *', timeZone: 'Local' }, /spec.schedule.*; spec.timeZone/],
  ];
  for (const [name, spec, message] of invalid) {
    test(`${name}: Ready=False InvalidSpec, no CronJob, terminal, one Warning`, () => {
      const input = {
        backupJob: backupJob({ spec }),
        cronJob: undefined,
        jobs: [],
        now: T0,
        config,
      };
      const { actions, result, next } = step(input);
      assert.deepEqual(types(actions), ['updateStatus', 'event:InvalidSpec']);
      assert.equal(result.kind, 'terminal');
      const ready = condition(next.backupJob, 'Ready');
      assert.equal(ready?.status, 'False');
      assert.equal(ready?.reason, 'InvalidSpec');
      assert.match(ready?.message ?? '', message);
      assert.equal(status(next).ready, false);
      const again = run(next);
      assert.deepEqual(again.actions, [], 'no retry loop: the second run writes nothing');
      assert.equal(again.result.kind, 'terminal');
    });
  }

  test('an existing CronJob is not changed while the spec is invalid', () => {
    const good = converged({
      backupJob: backupJob(),
      cronJob: undefined,
      jobs: [],
      now: T0,
      config,
    });
    const { actions } = step(withSpec(good, { schedule: '0 0 * * 8' }));
    assert.deepEqual(types(actions), ['updateStatus', 'event:InvalidSpec']);
  });

  test('fixing the spec brings Ready back to True (a transition)', () => {
    const bad = converged({
      backupJob: backupJob({ spec: { schedule: '* * *' } }),
      cronJob: undefined,
      jobs: [],
      now: T0,
      config,
    });
    const fixed = step({ ...withSpec(bad, { schedule: '10 2 * * *' }), now: minutes(5) });
    assert.deepEqual(types(fixed.actions), [
      'createCronJob',
      'event:CronJobCreated',
      'updateStatus',
    ]);
    assert.equal(
      condition(fixed.next.backupJob, 'Ready')?.lastTransitionTime,
      minutes(5).toISOString(),
    );
  });
});

describe('reconcile: what a BackupJob may put into a pod', () => {
  const base = converged({ backupJob: backupJob(), cronJob: undefined, jobs: [], now: T0, config });
  const imageOf = (w: ReconcileInput) =>
    w.cronJob?.spec?.jobTemplate.spec?.template.spec?.containers[0]?.image;

  test('an image outside the list: Ready=False ImageNotAllowed, a Warning, no CronJob', () => {
    const fresh = backupJob({ spec: { image: 'evil.example.com/dump:1' } });
    const { actions, next, result } = step({ ...base, backupJob: fresh, cronJob: undefined });
    assert.deepEqual(types(actions), ['updateStatus', 'event:ImageNotAllowed']);
    assert.equal(condition(next.backupJob, 'Ready')?.reason, 'ImageNotAllowed');
    assert.match(condition(next.backupJob, 'Ready')?.message ?? '', /evil\.example\.com\/dump:1/);
    assert.equal(status(next).ready, false);
    // A wider list comes with a restart, which makes no event: the BackupJob is looked at again.
    assert.deepEqual(result, { kind: 'requeueAfter', delayMs: config.refusedRecheckMs });
    assert.deepEqual(run(next).actions, []);
  });

  const volumesOf = (w: ReconcileInput) =>
    w.cronJob?.spec?.jobTemplate.spec?.template.spec?.volumes ?? [];
  const mountsOf = (w: ReconcileInput) =>
    w.cronJob?.spec?.jobTemplate.spec?.template.spec?.containers[0]?.volumeMounts ?? [];

  test('an existing CronJob keeps its image and is suspended while the image is refused', () => {
    const { actions, next, result } = step(withSpec(base, { image: 'evil.example.com/dump:1' }));
    assert.deepEqual(types(actions), [
      'patchCronJob',
      'event:CronJobSuspended',
      'updateStatus',
      'event:ImageNotAllowed',
    ]);
    assert.equal(imageOf(next), config.defaultImage);
    assert.equal(next.cronJob?.spec?.suspend, true);
    assert.match(
      condition(next.backupJob, 'Ready')?.message ?? '',
      /CronJob mysql-daily-backup is suspended/,
    );
    assert.equal(result.kind, 'requeueAfter');
    assert.deepEqual(run(next).actions, [], 'a withheld CronJob is left as it is');
  });

  test('an image the list allows reaches the CronJob, and is looked at again within grantRecheckMs', () => {
    const { next, result } = step(withSpec(base, { image: 'registry.example.com/custom:3' }));
    assert.equal(imageOf(next), 'registry.example.com/custom:3');
    assert.ok(result.kind === 'requeueAfter' && result.delayMs <= config.grantRecheckMs);
  });

  test('once the list no longer allows the image, the CronJob is suspended', () => {
    const custom = converged(withSpec(base, { image: 'registry.example.com/custom:3' }));
    const narrowed = reconcilerConfig({ ...config, allowedImages: [] });
    const { next } = step({ ...custom, config: narrowed });
    assert.equal(next.cronJob?.spec?.suspend, true);
    assert.equal(condition(next.backupJob, 'Ready')?.reason, 'ImageNotAllowed');
  });

  const withSecret = withSpec(base, { secretRef: { name: 'db' } });
  const secretName = (w: ReconcileInput) => volumesOf(w).find((v) => v.secret)?.secret?.secretName;
  const secretGrant = (allowed: boolean) => ({ resource: 'secrets', name: 'db', allowed }) as const;

  for (const [what, grants] of [
    ['not asked', undefined],
    ['refused', [secretGrant(false)]],
    ['granted for another Secret', [{ resource: 'secrets', name: 'other', allowed: true }]],
    [
      'granted as a claim of that name',
      [{ resource: 'persistentvolumeclaims', name: 'db', allowed: true }],
    ],
  ] as const) {
    test(`a Secret ${what}: Ready=False SecretNotAllowed, no mount, looked at again`, () => {
      const fresh = { ...withSecret, cronJob: undefined, grants };
      const { actions, next, result } = step(fresh);
      assert.deepEqual(types(actions), ['updateStatus', 'event:SecretNotAllowed']);
      assert.equal(condition(next.backupJob, 'Ready')?.reason, 'SecretNotAllowed');
      assert.match(
        condition(next.backupJob, 'Ready')?.message ?? '',
        /get.*secrets\/db in namespace ops/,
      );
      assert.equal(secretName(next), undefined);
      assert.deepEqual(result, { kind: 'requeueAfter', delayMs: config.refusedRecheckMs });
    });
  }

  const granted = converged({ ...withSecret, grants: [secretGrant(true)] });

  test('a Secret opted in is mounted, and looked at again within grantRecheckMs', () => {
    assert.equal(secretName(granted), 'db');
    assert.equal(condition(granted.backupJob, 'Ready')?.status, 'True');
    const { actions, result } = step(granted);
    assert.deepEqual(actions, []);
    assert.equal(result.kind, 'requeueAfter');
    const delay = result.kind === 'requeueAfter' ? result.delayMs : 0;
    assert.ok(delay <= config.grantRecheckMs && delay >= config.grantRecheckMs * 0.9, `${delay}`);
  });

  test('the re-check delay is fixed per object, differs between objects, never exceeds the bound', () => {
    const uids = Array.from({ length: 50 }, (_, i) => `uid-${i}`);
    const delays = uids.map((uid) => grantRecheckDelay(uid, config));
    assert.deepEqual(
      delays,
      uids.map((uid) => grantRecheckDelay(uid, config)),
    );
    assert.ok(new Set(delays).size > 40, 'spread over the last tenth of the period');
    for (const d of delays)
      assert.ok(d > config.grantRecheckMs * 0.9 && d <= config.grantRecheckMs);
  });

  test('a BackupJob that names neither a Secret nor a claim is not looked at again for grants', () => {
    // Due next at 02:10 plus the grace period: far beyond grantRecheckMs from 00:30.
    const { result } = step({ ...base, now: minutes(30) });
    assert.ok(result.kind === 'requeueAfter' && result.delayMs > config.grantRecheckMs);
  });

  describe('a withdrawn Secret grant', () => {
    const revoked = step({ ...granted, grants: [secretGrant(false)], now: minutes(30) });

    test('suspends the CronJob and removes the Secret volume and its mount', () => {
      assert.deepEqual(types(revoked.actions), [
        'patchCronJob',
        'event:CronJobSuspended',
        'updateStatus',
        'event:SecretNotAllowed',
      ]);
      const patch = revoked.actions[0];
      assert.ok(patch?.type === 'patchCronJob');
      assert.equal(
        (patch.patch.metadata as { resourceVersion?: string }).resourceVersion,
        granted.cronJob?.metadata?.resourceVersion,
        'the patch is conditional on the CronJob it was computed from',
      );
      assert.equal(revoked.next.cronJob?.spec?.suspend, true);
      assert.equal(secretName(revoked.next), undefined);
      assert.deepEqual(
        mountsOf(revoked.next).map((m) => m.name),
        ['backup-storage', 'tmp'],
      );
      assert.equal(
        volumesOf(revoked.next).find((v) => v.persistentVolumeClaim)?.persistentVolumeClaim
          ?.claimName,
        config.defaultStorageClaim,
        'the default claim needs no grant and stays',
      );
    });

    test('Ready=False SecretNotAllowed says so, a Warning says why, looked at again', () => {
      const ready = condition(revoked.next.backupJob, 'Ready');
      assert.equal(ready?.status, 'False');
      assert.equal(ready?.reason, 'SecretNotAllowed');
      assert.match(ready?.message ?? '', /secrets\/db.*CronJob mysql-daily-backup is suspended/);
      const warning = revoked.actions.find(
        (a) => a.type === 'emitEvent' && a.event.reason === 'SecretNotAllowed',
      );
      assert.ok(warning?.type === 'emitEvent' && warning.event.type === 'Warning');
      assert.deepEqual(revoked.result, { kind: 'requeueAfter', delayMs: config.refusedRecheckMs });
    });

    test('the withheld world converges: another run writes nothing', () => {
      assert.deepEqual(run({ ...revoked.next, now: minutes(31) }).actions, []);
    });

    test('restoring the grant restores the CronJob from the spec', () => {
      const restored = step({ ...revoked.next, grants: [secretGrant(true)], now: minutes(40) });
      assert.deepEqual(types(restored.actions).slice(0, 2), [
        'patchCronJob',
        'event:CronJobUpdated',
      ]);
      assert.equal(restored.next.cronJob?.spec?.suspend, false);
      assert.equal(secretName(restored.next), 'db');
      assert.deepEqual(mountsOf(restored.next), mountsOf(granted));
      assert.equal(condition(restored.next.backupJob, 'Ready')?.status, 'True');
      assert.deepEqual(run(restored.next).actions, []);
    });

    test('a spec suspended by its author stays suspended when the grant comes back', () => {
      const suspended = withSpec(revoked.next, { suspend: true });
      const restored = step({ ...suspended, grants: [secretGrant(true)], now: minutes(40) });
      assert.equal(restored.next.cronJob?.spec?.suspend, true);
      assert.equal(secretName(restored.next), 'db');
    });

    test('a CronJob being deleted is not patched', () => {
      const deleting = structuredClone(granted.cronJob!);
      deleting.metadata!.deletionTimestamp = minutes(29);
      const out = run({ ...granted, cronJob: deleting, grants: [secretGrant(false)] });
      assert.ok(!types(out.actions).includes('patchCronJob'));
    });
  });

  describe('spec.storage.claimName', () => {
    const withClaim = withSpec(base, { storage: { claimName: 'team-nfs' } });
    const claimGrant = (allowed: boolean) =>
      ({ resource: 'persistentvolumeclaims', name: 'team-nfs', allowed }) as const;
    const claimOf = (w: ReconcileInput) =>
      volumesOf(w).find((v) => v.persistentVolumeClaim)?.persistentVolumeClaim?.claimName;

    test('not opted in: Ready=False ClaimNotAllowed, no CronJob, looked at again', () => {
      const { actions, next, result } = step({ ...withClaim, cronJob: undefined });
      assert.deepEqual(types(actions), ['updateStatus', 'event:ClaimNotAllowed']);
      assert.match(
        condition(next.backupJob, 'Ready')?.message ?? '',
        /PersistentVolumeClaim "team-nfs" is not opted in.*persistentvolumeclaims\/team-nfs in namespace ops/,
      );
      assert.equal(next.cronJob, undefined);
      assert.deepEqual(result, { kind: 'requeueAfter', delayMs: config.refusedRecheckMs });
    });

    test('the claim of the default name also needs a grant once the spec names it', () => {
      const named = withSpec(base, { storage: { claimName: config.defaultStorageClaim } });
      const { next } = step({ ...named, cronJob: undefined });
      assert.equal(condition(next.backupJob, 'Ready')?.reason, 'ClaimNotAllowed');
    });

    const claimed = converged({ ...withClaim, grants: [claimGrant(true)] });

    test('opted in: mounted and looked at again within grantRecheckMs', () => {
      assert.equal(claimOf(claimed), 'team-nfs');
      const { result } = step(claimed);
      assert.ok(result.kind === 'requeueAfter' && result.delayMs <= config.grantRecheckMs);
    });

    test('withdrawn: the CronJob is suspended without the claim volume or its mount', () => {
      const { actions, next } = step({ ...claimed, grants: [claimGrant(false)] });
      assert.deepEqual(types(actions), [
        'patchCronJob',
        'event:CronJobSuspended',
        'updateStatus',
        'event:ClaimNotAllowed',
      ]);
      assert.equal(next.cronJob?.spec?.suspend, true);
      assert.equal(claimOf(next), undefined);
      assert.deepEqual(
        mountsOf(next).map((m) => m.name),
        ['tmp'],
      );
      const restored = step({ ...next, grants: [claimGrant(true)] });
      assert.equal(claimOf(restored.next), 'team-nfs');
      assert.equal(restored.next.cronJob?.spec?.suspend, false);
    });

    test('with a Secret too, both are named and only the refused one is removed', () => {
      const both = withSpec(claimed, { secretRef: { name: 'db' } });
      const ready = converged({ ...both, grants: [claimGrant(true), secretGrant(true)] });
      const { next } = step({ ...ready, grants: [claimGrant(false), secretGrant(true)] });
      assert.equal(condition(next.backupJob, 'Ready')?.reason, 'ClaimNotAllowed');
      assert.equal(secretName(next), 'db');
      assert.equal(claimOf(next), undefined);
      const neither = run({ ...ready, grants: [claimGrant(false), secretGrant(false)] });
      const bjNext = applyActions(ready, neither.actions);
      assert.match(
        condition(bjNext.backupJob, 'Ready')?.message ?? '',
        /Secret "db" is not opted in.*; PersistentVolumeClaim "team-nfs" is not opted in/,
      );
    });
  });
});

describe('reconcile: a CronJob of that name that this BackupJob does not control', () => {
  const foreignOwner = storedCronJobFor(backupJob());
  foreignOwner.metadata!.ownerReferences = [
    { apiVersion: 'x/v1', kind: 'Thing', name: 'other', uid: 'uid-other', controller: true },
  ];
  const unowned = storedCronJobFor(backupJob());
  unowned.metadata!.ownerReferences = undefined;
  for (const [name, cronJob] of [
    ['controlled by someone else', foreignOwner],
    ['without owner', unowned],
  ] as const) {
    test(`${name}: CronJobConflict, never overwritten, looked at again later`, () => {
      const input = { backupJob: backupJob(), cronJob, jobs: [], now: T0, config };
      const { actions, result, next } = step(input);
      assert.deepEqual(types(actions), ['updateStatus', 'event:CronJobConflict']);
      assert.equal(condition(next.backupJob, 'Ready')?.reason, 'CronJobConflict');
      assert.deepEqual(result, { kind: 'requeueAfter', delayMs: config.conflictRequeueMs });
      assert.deepEqual(run(next).actions, []);
    });
  }
});

describe('reconcile: observing the Jobs', () => {
  const base = converged({ backupJob: backupJob(), cronJob: undefined, jobs: [], now: T0, config });
  const done1 = new Date('2026-05-29T02:12:00Z');
  const done2 = new Date('2026-05-30T02:13:00Z');
  const now = new Date('2026-05-30T03:00:00Z');

  test('a succeeded Job sets lastBackupTime and BackupSucceeded=True', () => {
    const world = converged({ ...base, jobs: [job('b-1', 'succeeded', done1)], now });
    assert.equal(status(world).lastBackupTime, done1.toISOString());
    assert.equal(condition(world.backupJob, 'BackupSucceeded')?.status, 'True');
    assert.match(status(world).message ?? '', /last backup succeeded/);
  });

  test('the newest finished Job failing sets BackupSucceeded=False with its reason, one Warning', () => {
    const jobs = [
      job('b-1', 'succeeded', done1),
      job('b-2', 'failed', done2),
      job('b-3', 'active'),
    ];
    const { actions, next } = step({ ...base, jobs, now });
    assert.deepEqual(eventReasons(actions), ['BackupFailed']);
    const c = condition(next.backupJob, 'BackupSucceeded');
    assert.equal(c?.status, 'False');
    assert.equal(c?.reason, 'BackoffLimitExceeded');
    assert.match(c?.message ?? '', /b-2 failed: Job has reached the specified backoff limit/);
    assert.equal(status(next).lastBackupTime, done1.toISOString());
    assert.equal(status(next).lastFailureTime, done2.toISOString());
    assert.deepEqual(run(next).actions, []);
  });

  test('a later success clears the failure', () => {
    const failed = converged({ ...base, jobs: [job('b-1', 'failed', done1)], now });
    const ok = converged({
      ...failed,
      jobs: [job('b-1', 'failed', done1), job('b-2', 'succeeded', done2)],
    });
    assert.equal(condition(ok.backupJob, 'BackupSucceeded')?.status, 'True');
  });

  test('pruned Jobs do not erase what status remembers', () => {
    const seen = converged({ ...base, jobs: [job('b-1', 'succeeded', done1)], now });
    const { actions } = step({ ...seen, jobs: [] });
    assert.deepEqual(actions, []);
  });

  test('a Job labelled alike but annotated for another BackupJob is ignored', () => {
    const other = job('b-9', 'failed', done2);
    other.metadata!.annotations = { 'backup.ops.example.com/backupjob-name': 'someone-else' };
    const world = converged({ ...base, jobs: [job('b-1', 'succeeded', done1), other], now });
    assert.equal(condition(world.backupJob, 'BackupSucceeded')?.status, 'True');
  });

  test('cleanup Jobs are not backups', () => {
    const world = converged({ ...base, jobs: [cleanupJob(1, 'failed', done1)], now });
    assert.equal(condition(world.backupJob, 'BackupSucceeded')?.reason, 'NoBackupYet');
  });

  test('lastScheduleTime comes from the CronJob', () => {
    const cronJob = structuredClone(base.cronJob!);
    cronJob.status = { lastScheduleTime: new Date('2026-05-29T02:10:00Z') };
    const world = converged({ ...base, cronJob, now });
    assert.equal(status(world).lastScheduleTime, '2026-05-29T02:10:00.000Z');
  });
});

describe('reconcile: overdue by the schedule', () => {
  const base = converged({ backupJob: backupJob(), cronJob: undefined, jobs: [], now: T0, config });
  const scheduled = new Date('2026-05-29T02:10:00Z');
  const nextDue = new Date('2026-05-30T02:10:00Z').getTime() + GRACE;

  const cases: [string, Date, ReturnType<typeof job>[], string, string][] = [
    [
      'before the grace period ends',
      new Date(scheduled.getTime() + GRACE - 1),
      [],
      'Unknown',
      'AwaitingSchedule',
    ],
    [
      'past the grace without a backup',
      new Date(scheduled.getTime() + GRACE + 1),
      [],
      'True',
      'MissedSchedule',
    ],
    [
      'a backup failed',
      new Date(scheduled.getTime() + GRACE + 1),
      [job('b-1', 'failed', minutes(5, scheduled))],
      'True',
      'MissedSchedule',
    ],
    [
      'a backup succeeded after the scheduled time',
      new Date(scheduled.getTime() + GRACE + 1),
      [job('b-1', 'succeeded', minutes(5, scheduled))],
      'False',
      'OnSchedule',
    ],
  ];
  for (const [name, now, jobs, expected, reason] of cases) {
    test(`${name}: BackupOverdue=${expected} ${reason}`, () => {
      const world = converged({ ...base, jobs, now });
      const c = condition(world.backupJob, 'BackupOverdue');
      assert.equal(c?.status, expected);
      assert.equal(c?.reason, reason);
    });
  }

  test('overdue: a Warning once, status says why, requeue until the next due time', () => {
    const now = new Date(scheduled.getTime() + GRACE + 1);
    const { actions, result, next } = step({ ...base, now, config: uncapped });
    assert.deepEqual(eventReasons(actions), ['BackupOverdue']);
    assert.match(
      status(next).message ?? '',
      /no successful backup since the run scheduled at 2026-05-29T02:10/,
    );
    assert.deepEqual(result, { kind: 'requeueAfter', delayMs: nextDue - now.getTime() });
    assert.deepEqual(run(next).actions, []);
  });

  test('schedules missed while suspended do not count after resuming', () => {
    const suspended = converged({ ...withSpec(base, { suspend: true }), now: minutes(10) });
    const resumedAt = new Date('2026-05-29T05:00:00Z');
    const resumed = converged({ ...withSpec(suspended, { suspend: false }), now: resumedAt });
    assert.equal(condition(resumed.backupJob, 'BackupOverdue')?.status, 'Unknown');
    const stillFine = converged({ ...resumed, now: new Date('2026-05-30T02:00:00Z') });
    assert.equal(condition(stillFine.backupJob, 'BackupOverdue')?.status, 'Unknown');
    const missed = converged({ ...stillFine, now: new Date(nextDue + 1) });
    assert.equal(condition(missed.backupJob, 'BackupOverdue')?.status, 'True');
  });

  test('the schedule is read in spec.timeZone', () => {
    const zoned = converged({
      backupJob: backupJob({ spec: { timeZone: 'Asia/Tokyo' } }),
      cronJob: undefined,
      jobs: [],
      now: T0,
      config,
    });
    // 02:10 in Tokyo (UTC+9) is 17:10 UTC the day before; the next one is 2026-05-29T17:10Z.
    const due = new Date('2026-05-29T17:10:00Z').getTime() + GRACE;
    assert.deepEqual(run({ ...zoned, config: uncapped }).result, {
      kind: 'requeueAfter',
      delayMs: due - T0.getTime(),
    });
  });
});
