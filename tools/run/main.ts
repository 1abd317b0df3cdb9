import { spawn, type ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { freePort } from '#testing';
import { sandboxRedis, type SandboxRedis } from '../dev/redis.js';
import { parseRunArgs, USAGE, type RunOptions } from './args.js';
import { currentCluster } from './cluster.js';

const COMMAND = 'make run';

function options(): RunOptions {
  try {
    return parseRunArgs(process.argv.slice(2));
  } catch (e) {
    console.error(`${e instanceof Error ? e.message : String(e)}\n\n${USAGE}`);
    process.exit(2);
  }
}

interface Running {
  name: string;
  child: ChildProcess;
  exited: Promise<number | null>;
}

/** Starts an app from dist/ with its output prefixed by its name, like a Procfile runner. */
async function launch(name: string, app: string, env: Record<string, string>): Promise<Running> {
  const metrics = await freePort();
  const health = await freePort();
  const entry = fileURLToPath(new URL(`../../apps/${app}/src/main.js`, import.meta.url));
  const child = spawn(process.execPath, [entry], {
    env: {
      ...process.env,
      ...env,
      POD_NAME: `${name}-${process.pid}`,
      METRICS_PORT: String(metrics),
      HEALTH_PORT: String(health),
      METRICS_BIND_ADDRESS: '127.0.0.1',
      HEALTH_BIND_ADDRESS: '127.0.0.1',
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  for (const stream of [child.stdout!, child.stderr!])
    createInterface({ input: stream }).on('line', (line) => console.log(`[${name}] ${line}`));
  console.log(
    `${name}: pid ${child.pid}, metrics http://127.0.0.1:${metrics}/metrics, health http://127.0.0.1:${health}/readyz`,
  );
  const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
  return { name, child, exited };
}

async function main(): Promise<void> {
  const opts = options();
  if (opts.help) {
    console.log(USAGE);
    return;
  }
  let redis: SandboxRedis;
  let cluster: ReturnType<typeof currentCluster>;
  try {
    cluster = currentCluster();
    redis = await sandboxRedis(process.env, 'standalone', COMMAND);
  } catch (e) {
    console.error(`${COMMAND}: ${e instanceof Error ? e.message : String(e)}`);
    process.exit(1);
  }
  // The first thing printed: running against the wrong cluster is the classic mistake.
  console.log(
    `kubeconfig context "${cluster.context}" (${cluster.server}) from ${cluster.kubeconfig}`,
  );
  console.log(`redis: ${redis.address} (${redis.origin})`);
  const env = {
    KUBECONFIG: cluster.kubeconfig,
    ...redis.env,
    LEADER_ELECTION_NAMESPACE: process.env.LEADER_ELECTION_NAMESPACE || 'default',
  };
  const dashboard = opts.dashboard ? await freePort() : undefined;
  const dashboardEnv: Record<string, string> =
    dashboard === undefined
      ? {}
      : { QUEUE_DASHBOARD_PORT: String(dashboard), QUEUE_DASHBOARD_BIND_ADDRESS: '127.0.0.1' };
  const processes = [await launch('watcher', 'watcher', { ...env, ...dashboardEnv })];
  if (dashboard !== undefined) {
    console.log(`queue dashboard (read-only Bull Board): http://127.0.0.1:${dashboard}/`);
  }
  for (let i = 0; i < opts.workers; i++) processes.push(await launch(`worker-${i}`, 'worker', env));

  // Ctrl-C (or any process ending on its own) stops all of them; a second Ctrl-C kills at once.
  let stopping = false;
  const stop = () => {
    if (stopping) for (const p of processes) p.child.kill('SIGKILL');
    stopping = true;
    for (const p of processes) p.child.kill('SIGTERM');
  };
  process.on('SIGINT', stop);
  process.on('SIGTERM', stop);
  const first = await Promise.race(processes.map((p) => p.exited.then((code) => ({ p, code }))));
  if (!stopping) console.error(`${first.p.name} exited with ${first.code}: stopping the others`);
  stop();
  const codes = await Promise.all(processes.map((p) => p.exited));
  if (redis.owned) await redis.deployment.stop();
  console.log('stopped: watcher, workers' + (redis.owned ? ', redis' : ''));
  process.exit(codes.every((c) => c === 0) ? 0 : 1);
}

await main();
