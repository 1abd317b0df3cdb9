/**
 * How much memory the watcher's informer caches take per object, full objects vs what the
 * watcher keeps (trimmed by the cache transforms to what its predicates and the snapshots read).
 *
 *   OUT_DIR=/tmp/out npm run build && node /tmp/out/libs/watch/bench/informer-memory.js [objects]
 *
 * The emulator runs here with N BackupJobs and N CronJobs; each mode runs in its own child
 * process (so the emulator's memory is not counted), lists and watches both resources, waits
 * for sync, collects garbage and reports the heap it grew by.
 */
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { backupJobCrd } from '#api';
import { start } from '#apiserver-emulator';
import { restFrom } from '#testing/kube-cluster';

const objects = Number(process.argv[2] ?? 10_000);
const MODES = ['full', 'watcher'] as const;

const emu = await start({ port: 0, namespaces: ['bench'] });
try {
  await restFrom(emu.kubeconfig).request({
    method: 'POST',
    path: '/apis/apiextensions.k8s.io/v1/customresourcedefinitions',
    body: backupJobCrd(),
  });
  for (let i = 0; i < objects; i++) seed(i);
  console.log(`objects: ${objects} BackupJobs + ${objects} CronJobs`);
  for (const mode of MODES) {
    // Asynchronous: the emulator in this process must keep serving the child.
    const child = await promisify(execFile)(
      process.execPath,
      ['--expose-gc', new URL('./informer-memory-child.js', import.meta.url).pathname],
      { env: { ...process.env, KUBECONFIG_TEXT: emu.kubeconfig, MODE: mode }, maxBuffer: 1 << 20 },
    );
    const result = JSON.parse(child.stdout) as {
      heapBytes: number;
      rssBytes: number;
      syncMs: number;
    };
    const perObject = result.heapBytes / (2 * objects);
    console.log(
      `${mode.padEnd(8)} heap +${mb(result.heapBytes)} MiB (${Math.round(perObject)} B/object), rss +${mb(result.rssBytes)} MiB, synced in ${result.syncMs} ms`,
    );
  }
} finally {
  await emu.stop();
}

function seed(i: number): void {
  const name = `bj-${i}`;
  const owner = emu.objects.create({
    apiVersion: 'ops.example.com/v1alpha1',
    kind: 'BackupJob',
    metadata: {
      name,
      namespace: 'bench',
      labels: { team: 'db' },
      finalizers: ['backup.ops.example.com/finalizer'],
    },
    spec: { target: `mysql-${i}`, schedule: '10 2 * * *', retentionDays: 7 },
  });
  emu.objects.create({
    apiVersion: 'batch/v1',
    kind: 'CronJob',
    metadata: {
      name,
      namespace: 'bench',
      labels: {
        'app.kubernetes.io/managed-by': 'backupjob-operator',
        'backup.ops.example.com/backupjob': name,
      },
      ownerReferences: [
        {
          apiVersion: 'ops.example.com/v1alpha1',
          kind: 'BackupJob',
          name,
          uid: (owner.metadata as { uid?: string }).uid ?? '',
          controller: true,
          blockOwnerDeletion: true,
        },
      ],
    },
    spec: {
      schedule: '10 2 * * *',
      jobTemplate: {
        spec: {
          template: {
            metadata: { labels: { 'backup.ops.example.com/backupjob': name } },
            spec: {
              restartPolicy: 'OnFailure',
              containers: [
                {
                  name: 'backup',
                  image: 'ghcr.io/example/backup:1.0.0',
                  env: [{ name: 'TARGET', value: `mysql-${i}` }],
                },
              ],
            },
          },
        },
      },
    },
  });
}

function mb(bytes: number): string {
  return (bytes / 1024 / 1024).toFixed(1);
}
