// One measurement of informer-memory.ts: MODE=full caches whole objects as client-node's informer
// does; MODE=watcher runs the informers exactly as the KeySource configures them.
import { BACKUPJOBS } from '#api';
import { CRONJOBS, Informer } from '#kube';
import { CHILD_SELECTOR } from '../src/key-source.js';
import { stripBackupJob, stripCronJob } from '../src/transform.js';
import { restFrom } from '#testing/kube-cluster';

const gc = (globalThis as { gc?: () => void }).gc;
if (!gc) throw new Error('run with --expose-gc');
const watcherMode = process.env.MODE === 'watcher';
const rest = restFrom(process.env.KUBECONFIG_TEXT ?? '');

gc();
const before = process.memoryUsage();
const started = performance.now();
const informers = [
  new Informer({
    rest,
    resource: BACKUPJOBS,
    transform: watcherMode ? stripBackupJob : undefined,
  }),
  new Informer({
    rest,
    resource: CRONJOBS,
    labelSelector: CHILD_SELECTOR,
    transform: watcherMode ? stripCronJob : undefined,
  }),
];
for (const informer of informers) informer.start();
while (!informers.every((i) => i.synced)) await new Promise((r) => setTimeout(r, 20));
const syncMs = Math.round(performance.now() - started);
await new Promise((r) => setTimeout(r, 200));
gc();
const after = process.memoryUsage();
process.stdout.write(
  JSON.stringify({
    heapBytes: after.heapUsed - before.heapUsed,
    rssBytes: after.rss - before.rss,
    syncMs,
    cached: informers.reduce((n, i) => n + i.size, 0),
  }),
);
await Promise.all(informers.map((i) => i.stop()));
