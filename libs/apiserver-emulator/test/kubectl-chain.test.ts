import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import type { Emulator } from '../src/index.js';
import {
  CRD_FILE,
  KUBECTL_VERSIONS,
  SAMPLE_FILE,
  kubectl,
  kubectlSkip,
  withEmulator,
} from './support.js';
import { eventually } from '#testing';

/** The local chain of the project README with every installed kubectl (see KUBECTL_VERSIONS). */
async function chain(emu: Emulator, bin: string): Promise<void> {
  const k = kubectl(emu, bin);
  try {
    // Applying a BackupJob before its CRD exists fails with the real server's message.
    const early = await k(['apply', '-f', SAMPLE_FILE]);
    assert.notEqual(early.code, 0);
    assert.match(
      early.stderr,
      /no matches for kind "BackupJob" in version "ops.example.com\/v1alpha1"/,
    );

    const crd = await k(['apply', '-f', CRD_FILE]);
    assert.equal(crd.code, 0, crd.stderr);
    assert.match(
      crd.stdout,
      /customresourcedefinition.apiextensions.k8s.io\/backupjobs.ops.example.com created/,
    );
    const crds = await k(['get', 'crd']);
    assert.match(crds.stdout, /backupjobs.ops.example.com/);
    const resources = await k(['api-resources']);
    assert.match(
      resources.stdout,
      /backupjobs\s+bj\s+ops.example.com\/v1alpha1\s+true\s+BackupJob/,
    );

    // The sample brings its namespace (created by the early apply already).
    const applied = await k(['apply', '-f', SAMPLE_FILE]);
    assert.equal(applied.code, 0, applied.stderr);
    assert.match(applied.stdout, /namespace\/ops unchanged/);
    assert.match(applied.stdout, /backupjob.ops.example.com\/mysql-daily created/);
    const again = await k(['apply', '-f', SAMPLE_FILE]);
    assert.match(again.stdout, /unchanged/);

    // An invalid object is rejected with the field named.
    const badFile = join(k.dir, 'invalid.yaml');
    writeFileSync(
      badFile,
      'apiVersion: ops.example.com/v1alpha1\nkind: BackupJob\nmetadata: {name: broken, namespace: ops}\nspec: {target: mysql, schedule: "@daily", retentionDays: 0}\n',
    );
    const invalid = await k(['apply', '-f', badFile]);
    assert.notEqual(invalid.code, 0);
    assert.match(invalid.stderr, /spec.retentionDays: Invalid value: 0/);

    // Printer columns come from the CRD (server-side Table).
    const all = await k(['get', 'backupjob', '-A']);
    assert.equal(all.code, 0, all.stderr);
    assert.match(all.stdout, /NAMESPACE\s+NAME\s+TARGET\s+SCHEDULE\s+READY\s+LAST BACKUP\s+AGE/);
    assert.match(all.stdout, /ops\s+mysql-daily\s+mysql\s+10 2 \* \* \*/);

    const yaml = await k(['get', 'bj', '-n', 'ops', '-o', 'yaml']);
    assert.match(yaml.stdout, /retentionDays: 7/);
    assert.match(yaml.stdout, /uid: /);

    const bj = emu.objects.get('ops.example.com/v1alpha1', 'BackupJob', 'mysql-daily', 'ops')!;
    emu.objects.create({
      apiVersion: 'v1',
      kind: 'Event',
      metadata: { name: 'mysql-daily.1', namespace: 'ops' },
      involvedObject: {
        apiVersion: 'ops.example.com/v1alpha1',
        kind: 'BackupJob',
        name: 'mysql-daily',
        namespace: 'ops',
        uid: bj.metadata.uid,
      },
      reason: 'CronJobCreated',
      message: 'created CronJob mysql-daily',
      type: 'Normal',
      source: { component: 'backupjob-operator' },
      count: 1,
      firstTimestamp: bj.metadata.creationTimestamp,
      lastTimestamp: bj.metadata.creationTimestamp,
    });
    const described = await k(['describe', 'backupjob', 'mysql-daily', '-n', 'ops']);
    assert.equal(described.code, 0, described.stderr);
    assert.match(
      described.stdout,
      /Events:[\s\S]*Normal\s+CronJobCreated[\s\S]*created CronJob mysql-daily/,
    );

    const cronjobs = await k(['get', 'cronjob', '-n', 'ops']);
    assert.equal(cronjobs.code, 0, cronjobs.stderr);
    assert.match(cronjobs.stdout + cronjobs.stderr, /No resources found in ops namespace/);

    // RBAC answers auth can-i for an impersonated ServiceAccount.
    emu.objects.create({
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'ClusterRole',
      metadata: { name: 'bj-reader' },
      rules: [
        {
          apiGroups: ['ops.example.com'],
          resources: ['backupjobs'],
          verbs: ['get', 'list', 'watch'],
        },
      ],
    });
    emu.objects.create({
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'ClusterRoleBinding',
      metadata: { name: 'bj-reader' },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'bj-reader' },
      subjects: [{ kind: 'ServiceAccount', name: 'watcher', namespace: 'ops' }],
    });
    const yes = await k([
      'auth',
      'can-i',
      'list',
      'backupjobs.ops.example.com',
      '--as=system:serviceaccount:ops:watcher',
      '-A',
    ]);
    assert.equal(yes.stdout.trim(), 'yes', yes.stderr);
    const no = await k([
      'auth',
      'can-i',
      'delete',
      'backupjobs.ops.example.com',
      '--as=system:serviceaccount:ops:watcher',
      '-A',
    ]);
    assert.equal(no.stdout.trim(), 'no');
    assert.equal(no.code, 1);

    // get -w prints the current row, then changes.
    const watcher = spawn(bin, ['get', 'bj', '-n', 'ops', '-w'], {
      env: { ...process.env, KUBECONFIG: k.kubeconfig, KUBECACHEDIR: `${k.kubeconfig}.cache` },
    });
    let out = '';
    watcher.stdout.on('data', (d: Buffer) => (out += d.toString()));
    try {
      await eventually('first row of get -w', () => /mysql-daily/.test(out));
      emu.objects.patch('ops.example.com/v1alpha1', 'BackupJob', 'mysql-daily', 'ops', {
        spec: { target: 'postgres' },
      });
      await eventually('updated row of get -w', () => /mysql-daily\s+postgres/.test(out));
    } finally {
      watcher.kill('SIGTERM');
    }

    // kubectl delete waits while a finalizer holds the object and returns once it is removed.
    emu.objects.patch('ops.example.com/v1alpha1', 'BackupJob', 'mysql-daily', 'ops', {
      metadata: { finalizers: ['backup.ops.example.com/finalizer'] },
    });
    const deleting = k(['delete', 'backupjob', 'mysql-daily', '-n', 'ops', '--timeout=60s']);
    await eventually(
      'deletionTimestamp set',
      () =>
        emu.objects.get('ops.example.com/v1alpha1', 'BackupJob', 'mysql-daily', 'ops')?.metadata
          .deletionTimestamp,
    );
    let finished = false;
    void deleting.then(() => (finished = true));
    await new Promise((r) => setTimeout(r, 300));
    assert.equal(finished, false, 'kubectl delete still waits for the finalizer');
    emu.objects.patch('ops.example.com/v1alpha1', 'BackupJob', 'mysql-daily', 'ops', {
      metadata: { finalizers: null },
    });
    const deleted = await deleting;
    assert.equal(deleted.code, 0, deleted.stderr);
    assert.match(deleted.stdout, /backupjob.ops.example.com "mysql-daily" deleted/);
  } finally {
    k.cleanup();
  }
}

for (const { label, bin } of KUBECTL_VERSIONS) {
  describe(label, () => {
    const skip = kubectlSkip(bin);
    if (skip) {
      test(`chain (${bin} is not installed)`, { skip }, () => {});
      return;
    }
    test('apply CRD and sample, get with printer columns, describe with Events, can-i, get -w, delete waits for finalizers', async () => {
      const emu = await withEmulator();
      try {
        await chain(emu, bin);
      } finally {
        await emu.stop();
      }
    });
  });
}
