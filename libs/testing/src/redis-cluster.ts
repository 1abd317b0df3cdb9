import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { freePort } from './ports.js';

export interface RedisCluster {
  /** The primaries, for ioredis `new Cluster(nodes)`. */
  readonly nodes: { host: string; port: number }[];
  stop(): Promise<void>;
}

/**
 * Starts a Redis Cluster of `size` primaries (no replicas) from the Debian redis-server on free
 * loopback ports, so a test can check that every multi-key command stays inside one hash slot.
 */
export async function startRedisCluster(size = 3): Promise<RedisCluster> {
  const dir = mkdtempSync(join(tmpdir(), 'redis-cluster-'));
  const children: ChildProcess[] = [];
  const nodes: { host: string; port: number }[] = [];
  try {
    for (let i = 0; i < size; i++) {
      // The bus port is chosen too: port + 10000, Redis' default, may be taken or out of range.
      const [port, busPort] = [await freePort(), await freePort()];
      const nodeDir = join(dir, String(port));
      mkdirSync(nodeDir);
      children.push(launchNode(port, busPort, nodeDir));
      nodes.push({ host: '127.0.0.1', port });
    }
    for (const node of nodes) await waitFor(node.port, async (c) => (await c.ping()) === 'PONG');
    const create = spawnSync(
      'redis-cli',
      [
        '--cluster',
        'create',
        ...nodes.map((n) => `${n.host}:${n.port}`),
        '--cluster-replicas',
        '0',
        '--cluster-yes',
      ],
      { encoding: 'utf8', timeout: 30_000 },
    );
    if (create.status !== 0)
      throw new Error(`redis-cli --cluster create failed: ${create.stdout}${create.stderr}`);
    for (const node of nodes) {
      await waitFor(node.port, async (c) => (await c.cluster('INFO')).includes('cluster_state:ok'));
    }
  } catch (err) {
    await Promise.all(children.map(kill));
    rmSync(dir, { recursive: true, force: true });
    throw err;
  }
  return {
    nodes,
    async stop() {
      await Promise.all(children.map(kill));
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

function launchNode(port: number, busPort: number, dir: string): ChildProcess {
  return spawn(
    'redis-server',
    [
      '--port',
      String(port),
      '--cluster-port',
      String(busPort),
      '--bind',
      '127.0.0.1',
      '--cluster-enabled',
      'yes',
      '--cluster-config-file',
      join(dir, 'nodes.conf'),
      '--cluster-node-timeout',
      '5000',
      '--save',
      '',
      '--appendonly',
      'no',
      '--dir',
      dir,
    ],
    { stdio: 'ignore' },
  );
}

async function waitFor(port: number, ready: (client: Redis) => Promise<boolean>): Promise<void> {
  const deadline = Date.now() + 30_000;
  for (;;) {
    const client = new Redis({
      port,
      host: '127.0.0.1',
      lazyConnect: true,
      maxRetriesPerRequest: 0,
      retryStrategy: () => null,
    });
    client.on('error', () => undefined);
    try {
      await client.connect();
      if (await ready(client)) return;
    } catch {
      // not up yet
    } finally {
      client.disconnect();
    }
    if (Date.now() > deadline)
      throw new Error(`redis cluster node on port ${port} did not become ready`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

async function kill(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  await new Promise<void>((resolve) => {
    child.once('exit', () => resolve());
    child.kill('SIGKILL');
  });
}
