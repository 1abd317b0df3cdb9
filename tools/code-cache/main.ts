import { fileURLToPath } from 'node:url';
import { API_VERSION, KIND, type BackupJob } from '#api';
import { writeCodeCache } from '#runtime/bundle-loader';
import {
  condition,
  findOnPath,
  OPERATOR_NAMESPACE,
  startOperatorSystem,
  startRedisDeployment,
  untilWorking,
  waitFor,
  type ManagedProcess,
  type OperatorSystem,
  type RedisDeployment,
} from '#testing';

/**
 * The build's last step: the code cache of each app's bundle, taken from a training run.
 *
 * A cache taken right after a bundle loads holds only what loading compiled; a process then still
 * compiles, on its way to ready, every function its start runs: the NestJS bootstrap, the Redis
 * and Kubernetes clients, the queue, the informers, leader election. So the build starts the real
 * apps, one watcher and one worker, against the API emulator and a private redis-server, lets them
 * make one BackupJob Ready, and has each write its cache then (train-app.ts). Without a
 * redis-server on PATH the caches are taken after loading only, and the build says so.
 */
const APPS = ['watcher', 'worker'] as const;
const bundleOf = (app: string) =>
  fileURLToPath(new URL(`../../apps/${app}/bundle/app.cjs`, import.meta.url));
const trainer = fileURLToPath(new URL('train-app.js', import.meta.url));
const TIMEOUT_MS = 60_000;
const NAME = 'code-cache-training';

async function privateRedis(): Promise<RedisDeployment | undefined> {
  if (findOnPath('redis-server')) return startRedisDeployment('standalone');
  console.log(
    'code caches: no redis-server on PATH to train them on; each holds only what loading its bundle compiles',
  );
  return undefined;
}

function isReady(sys: OperatorSystem): boolean {
  const job = sys.emulator.objects.get(API_VERSION, KIND, NAME, OPERATOR_NAMESPACE);
  return condition(job as unknown as BackupJob | undefined, 'Ready')?.status === 'True';
}

/** What a process said last, for a training run that failed. */
const lastWords = (p: ManagedProcess) => `${p.name}:\n  ${p.lines.slice(-20).join('\n  ')}`;

async function train(redis: RedisDeployment): Promise<void> {
  const sys = await startOperatorSystem({
    watchers: 1,
    workers: 1,
    redisDeployment: redis,
    env: { LOG_LEVEL: 'info' },
    entryPoints: {
      watcher: [trainer, bundleOf('watcher')],
      worker: [trainer, bundleOf('worker')],
    },
  });
  const processes = [...sys.watchers, ...sys.workers];
  try {
    await untilWorking(sys, TIMEOUT_MS);
    sys.emulator.objects.create({
      apiVersion: API_VERSION,
      kind: KIND,
      metadata: { name: NAME, namespace: OPERATOR_NAMESPACE },
      spec: { target: 'mysql', schedule: '10 2 * * *', retentionDays: 7 },
    });
    const { finished } = await waitFor(() => isReady(sys), Boolean, TIMEOUT_MS);
    if (!finished) throw new Error(`the training BackupJob was not Ready in ${TIMEOUT_MS} ms`);
    for (const p of processes) {
      const code = await p.stop('SIGUSR2');
      if (code !== 0) throw new Error(`${p.name} exited ${code} instead of writing its cache`);
    }
  } catch (err) {
    throw new Error(
      `code caches: the training run failed: ${err instanceof Error ? err.message : String(err)}\n${processes.map(lastWords).join('\n')}`,
      { cause: err },
    );
  } finally {
    await sys.stop();
  }
}

const redis = await privateRedis();
if (redis) {
  try {
    await train(redis);
    console.log('code caches: trained on a start and one BackupJob made Ready');
  } finally {
    await redis.stop();
  }
} else {
  for (const app of APPS) writeCodeCache(bundleOf(app));
}
