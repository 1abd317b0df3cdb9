import { spawnSync } from 'node:child_process';
import { eventually } from './wait.js';
import { freePort } from './ports.js';
import {
  onlineReplicaPorts,
  startRedisServer,
  withServer,
  type RedisServer,
  type RedisServerOptions,
} from './redis-server.js';

export interface RedisClusterOptions extends Pick<RedisServerOptions, 'password' | 'tls'> {
  /** Replicas per primary (default 0). */
  readonly replicas?: number;
  /**
   * cluster-node-timeout (default 5000): how long a silent primary stays a primary before its
   * replica's failure detection takes over.
   */
  readonly nodeTimeoutMs?: number;
}

/** One node as CLUSTER NODES describes it. */
export interface ClusterNodeInfo {
  readonly id: string;
  readonly port: number;
  readonly primary: boolean;
  /** The primary's id, for a replica. */
  readonly primaryId: string | undefined;
  readonly failed: boolean;
  /** Slot ranges served, for a primary: [from, to] inclusive. */
  readonly slots: readonly (readonly [number, number])[];
}

export type PromoteBy = 'failover-force' | 'failure-detection';

export interface ClusterFailover {
  /** Port of the primary that was killed. */
  readonly killed: number;
  /** Port of the replica that serves its slots now. */
  readonly promoted: number;
}

export interface RedisCluster {
  /** The primaries at start, for ioredis `new Cluster(nodes)`. */
  readonly nodes: { host: string; port: number }[];
  /** Every node's server, primaries first. */
  readonly servers: readonly RedisServer[];
  /** What the cluster says about its nodes now (asked of a running node). */
  topology(): Promise<ClusterNodeInfo[]>;
  /** The hash slot of a key. */
  slotOf(key: string): Promise<number>;
  /**
   * Kills (SIGKILL) the primary serving `slot` and resolves once its replica serves the slot and
   * every running node says the cluster is ok. The replica is promoted by CLUSTER FAILOVER FORCE
   * at once, or by the cluster's own failure detection after the node timeout.
   */
  killPrimary(slot: number, promoteBy: PromoteBy): Promise<ClusterFailover>;
  stop(): Promise<void>;
}

/**
 * Starts a Redis Cluster of `size` primaries, each with `replicas` replicas, from the Debian
 * redis-server on free loopback ports, so a test can check that every multi-key command stays
 * inside one hash slot and can fail primaries over.
 */
export async function startRedisCluster(
  size = 3,
  options: RedisClusterOptions = {},
): Promise<RedisCluster> {
  const servers: RedisServer[] = [];
  const stop = async () => {
    await Promise.all(servers.map((s) => s.stop()));
  };
  const replicas = options.replicas ?? 0;
  const auth = { password: options.password, tls: options.tls };
  try {
    for (let i = 0; i < size * (1 + replicas); i++) {
      // The bus port is chosen too: port + 10000, Redis' default, may be taken or out of range.
      const busPort = String(await freePort());
      const args = [
        ...['--cluster-enabled', 'yes', '--cluster-port', busPort],
        ...['--cluster-config-file', 'nodes.conf'],
        ...['--cluster-node-timeout', String(options.nodeTimeoutMs ?? 5000)],
        ...(options.tls ? ['--tls-cluster', 'yes'] : []),
      ];
      servers.push(await startRedisServer(args, auth));
    }
    const all = servers.map((s) => ({ host: '127.0.0.1', port: s.port }));
    // redis-cli makes the first `size` nodes the primaries and the rest their replicas.
    const create = spawnSync(
      'redis-cli',
      [
        ...cliAuthArgs(options),
        '--cluster',
        'create',
        ...all.map((n) => `${n.host}:${n.port}`),
        '--cluster-replicas',
        String(replicas),
        '--cluster-yes',
      ],
      { encoding: 'utf8', timeout: 30_000 },
    );
    if (create.status !== 0) {
      throw new Error(`redis-cli --cluster create failed: ${create.stdout}${create.stderr}`);
    }
    await waitForCluster(servers, options);
    return clusterHandle(servers, all.slice(0, size), options, stop);
  } catch (err) {
    await stop();
    throw err;
  }
}

function clusterHandle(
  servers: RedisServer[],
  nodes: { host: string; port: number }[],
  options: RedisClusterOptions,
  stop: () => Promise<void>,
): RedisCluster {
  const running = () => {
    const server = servers.find((s) => s.running);
    if (!server) throw new Error('no node of the cluster is running');
    return server.port;
  };
  const cluster: RedisCluster = {
    nodes,
    servers,
    topology: () =>
      withServer(running(), options, async (c) => parseNodes(String(await c.cluster('NODES')))),
    slotOf: (key) =>
      withServer(running(), options, async (c) => Number(await c.cluster('KEYSLOT', key))),
    async killPrimary(slot, promoteBy) {
      const before = await cluster.topology();
      const primary = before.find((n) => n.primary && !n.failed && serves(n, slot));
      const replica = primary && before.find((n) => n.primaryId === primary.id && !n.failed);
      if (!primary || !replica) {
        throw new Error(`slot ${slot} has no running primary with a running replica to promote`);
      }
      await servers.find((s) => s.port === primary.port)!.kill();
      if (promoteBy === 'failover-force') {
        // FORCE skips the handshake with the dead primary; the other primaries still vote.
        await withServer(replica.port, options, (c) => c.cluster('FAILOVER', 'FORCE'));
      }
      await eventually(
        `the replica on ${replica.port} to serve slot ${slot}`,
        async () => {
          const now = await withServer(replica.port, options, async (c) =>
            parseNodes(String(await c.cluster('NODES'))),
          );
          return now.some((n) => n.port === replica.port && n.primary && serves(n, slot));
        },
        60_000,
      );
      await waitForCluster(servers, options);
      return { killed: primary.port, promoted: replica.port };
    },
    stop,
  };
  return cluster;
}

function serves(node: ClusterNodeInfo, slot: number): boolean {
  return node.slots.some(([from, to]) => slot >= from && slot <= to);
}

/**
 * Every running node must say the cluster is ok, agree on the primaries, and every replica must
 * be in sync with its primary and online in its primary's view, before clients are pointed at it
 * (or after a failover).
 */
async function waitForCluster(
  servers: readonly RedisServer[],
  options: RedisClusterOptions,
): Promise<void> {
  await eventually(
    'the cluster to be ok on every node',
    async () => {
      const views = await Promise.all(
        servers
          .filter((s) => s.running)
          .map((s) =>
            withServer(s.port, options, async (c) => ({
              port: s.port,
              info: String(await c.cluster('INFO')),
              replication: await c.info('replication'),
              nodes: parseNodes(String(await c.cluster('NODES'))),
            })),
          ),
      );
      const primaries = (nodes: ClusterNodeInfo[]) =>
        nodes
          .filter((n) => n.primary && !n.failed && n.slots.length > 0)
          .map((n) => n.port)
          .sort()
          .join(',');
      const first = primaries(views[0]!.nodes);
      const agreed = views.every(
        (v) =>
          v.info.includes('cluster_state:ok') &&
          primaries(v.nodes) === first &&
          (v.replication.includes('role:master') ||
            v.replication.includes('master_link_status:up')),
      );
      if (!agreed) return false;
      for (const v of views) {
        const primary = /master_port:(\d+)/.exec(v.replication)?.[1];
        if (primary === undefined) continue;
        if (!(await onlineReplicaPorts(Number(primary), options)).includes(v.port)) return false;
      }
      return true;
    },
    60_000,
    100,
  );
}

/** CLUSTER NODES: `<id> <ip:port@bus> <flags> <primary> <ping> <pong> <epoch> <link> <slots…>`. */
function parseNodes(text: string): ClusterNodeInfo[] {
  return text
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((line) => {
      const [id = '', address = '', flags = '', primaryId = '', , , , , ...slots] = line.split(' ');
      const flagList = flags.split(',');
      return {
        id,
        port: Number(/:(\d+)@/.exec(address)?.[1]),
        primary: flagList.includes('master'),
        primaryId: primaryId === '-' ? undefined : primaryId,
        failed: flagList.includes('fail') || flagList.includes('fail?'),
        slots: slots
          .filter((s) => /^\d/.test(s))
          .map((s) => {
            const [from, to = from] = s.split('-').map(Number) as [number, number?];
            return [from, to] as const;
          }),
      };
    });
}

function cliAuthArgs(options: RedisClusterOptions): string[] {
  return [
    ...(options.password ? ['-a', options.password, '--no-auth-warning'] : []),
    ...(options.tls ? ['--tls', '--cacert', options.tls.certFile] : []),
  ];
}
