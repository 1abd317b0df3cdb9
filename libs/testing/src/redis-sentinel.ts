import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Redis } from 'ioredis';
import { eventually } from './wait.js';
import { freePort } from './ports.js';
import {
  onlineReplicaPorts,
  startRedisServer,
  withRedis,
  withServer,
  type RedisServer,
  type RedisServerOptions,
} from './redis-server.js';

export interface RedisSentinelOptions extends Pick<RedisServerOptions, 'password' | 'tls'> {
  /** Replicas of the primary (default 1). */
  readonly replicas?: number;
  /** Sentinel processes (default 1; quorum is their majority). */
  readonly sentinels?: number;
  /** The master name the Sentinels monitor (default `mymaster`). */
  readonly masterName?: string;
  /** down-after-milliseconds (default 1000): how long a silent primary stays the primary. */
  readonly downAfterMs?: number;
  /** The Sentinels' own password (requirepass of the Sentinel processes); none by default. */
  readonly sentinelPassword?: string;
}

export interface SentinelFailover {
  /** Port of the primary that was killed. */
  readonly killed: number;
  /** Port of the replica the Sentinels promoted. */
  readonly promoted: number;
}

export interface RedisSentinel {
  /** The Sentinels, for ioredis `new Redis({ sentinels, name })`. */
  readonly sentinels: { host: string; port: number }[];
  readonly masterName: string;
  /** The data nodes, the first started as the primary. */
  readonly servers: readonly RedisServer[];
  /** Port of the primary the Sentinels name now. */
  primaryPort(): Promise<number>;
  /**
   * Kills (SIGKILL) the current primary and resolves once every Sentinel names a promoted replica
   * that answers as the primary.
   */
  killPrimary(): Promise<SentinelFailover>;
  stop(): Promise<void>;
}

interface SentinelProcess {
  readonly port: number;
  readonly child: ChildProcess;
  readonly dir: string;
}

/**
 * Starts a primary with `replicas` replicas and `sentinels` Sentinels (`redis-server --sentinel`)
 * on free loopback ports: the replication + Sentinel setup the common Helm charts deploy.
 */
export async function startRedisSentinel(
  options: RedisSentinelOptions = {},
): Promise<RedisSentinel> {
  const masterName = options.masterName ?? 'mymaster';
  const auth = { password: options.password, tls: options.tls };
  const servers: RedisServer[] = [];
  const sentinels: SentinelProcess[] = [];
  const stop = async () => {
    await Promise.all(sentinels.map((s) => killSentinel(s)));
    await Promise.all(servers.map((s) => s.stop()));
  };
  try {
    servers.push(await startRedisServer([], auth));
    const primary = servers[0]!.port;
    for (let i = 0; i < (options.replicas ?? 1); i++) {
      servers.push(await startRedisServer([], { ...auth, replicaOf: primary }));
    }
    const count = options.sentinels ?? 1;
    for (let i = 0; i < count; i++) {
      sentinels.push(await launchSentinel(primary, masterName, Math.floor(count / 2) + 1, options));
    }
    const handle = sentinelHandle(masterName, servers, sentinels, options, stop);
    await waitForSentinels(handle, servers, options);
    return handle;
  } catch (err) {
    await stop();
    throw err;
  }
}

function sentinelHandle(
  masterName: string,
  servers: RedisServer[],
  sentinels: SentinelProcess[],
  options: RedisSentinelOptions,
  stop: () => Promise<void>,
): RedisSentinel {
  const handle: RedisSentinel = {
    sentinels: sentinels.map((s) => ({ host: '127.0.0.1', port: s.port })),
    masterName,
    servers,
    async primaryPort() {
      const [, port] = (await askSentinel(sentinels[0]!.port, options, (c) =>
        c.call('SENTINEL', 'get-master-addr-by-name', masterName),
      )) as [string, string];
      return Number(port);
    },
    async killPrimary() {
      const killed = await handle.primaryPort();
      // As on a Cluster: no failover without a running replica to promote; killing the last
      // server would be an outage, not a failover.
      if (!servers.some((s) => s.running && s.port !== killed)) {
        throw new Error(`the primary on ${killed} has no running replica to promote`);
      }
      await servers.find((s) => s.port === killed)!.kill();
      let promoted = killed;
      await eventually(
        'the Sentinels to promote a replica',
        async () => {
          const ports = await Promise.all(
            sentinels.map(async (s) => {
              const reply = await askSentinel(s.port, options, (c) =>
                c.call('SENTINEL', 'get-master-addr-by-name', masterName),
              );
              return Number((reply as [string, string])[1]);
            }),
          );
          promoted = ports[0]!;
          if (promoted === killed || ports.some((p) => p !== promoted)) return false;
          const role = await withServer(promoted, options, (c) => c.info('replication'));
          return role.includes('role:master');
        },
        60_000,
        100,
      );
      await waitForSentinels(handle, servers, options);
      return { killed, promoted };
    },
    stop,
  };
  return handle;
}

/**
 * Every Sentinel knows every other Sentinel and every running replica, and every running replica
 * is in sync with the primary and online in the primary's view, so a failover can be asked for,
 * clients get a consistent answer, and a write the queue confirms is on every replica.
 */
async function waitForSentinels(
  handle: RedisSentinel,
  servers: readonly RedisServer[],
  options: RedisSentinelOptions,
): Promise<void> {
  await eventually(
    'the Sentinels and replicas to be in place',
    async () => {
      const primary = await handle.primaryPort();
      const replicas = servers.filter((s) => s.running && s.port !== primary);
      for (const { port } of handle.sentinels) {
        const [known, peers] = await askSentinel(port, options, async (c) => [
          (await c.call('SENTINEL', 'replicas', handle.masterName)) as string[][],
          (await c.call('SENTINEL', 'sentinels', handle.masterName)) as string[][],
        ]);
        const healthy = known.filter((fields) => {
          const flags = fields[fields.indexOf('flags') + 1] ?? '';
          return !/s_down|o_down|disconnected/.test(flags);
        });
        if (healthy.length < replicas.length || peers.length < handle.sentinels.length - 1) {
          return false;
        }
      }
      for (const replica of replicas) {
        const info = await withServer(replica.port, options, (c) => c.info('replication'));
        if (!info.includes('master_link_status:up') || !info.includes(`master_port:${primary}`)) {
          return false;
        }
      }
      const online = await onlineReplicaPorts(primary, options);
      return replicas.every((r) => online.includes(r.port));
    },
    60_000,
    100,
  );
}

async function launchSentinel(
  primary: number,
  masterName: string,
  quorum: number,
  options: RedisSentinelOptions,
): Promise<SentinelProcess> {
  const port = await freePort();
  const dir = mkdtempSync(join(tmpdir(), 'redis-sentinel-'));
  const { tls, password, sentinelPassword } = options;
  const lines = [
    ...(tls
      ? [
          'port 0',
          `tls-port ${port}`,
          `tls-cert-file ${tls.certFile}`,
          `tls-key-file ${tls.keyFile}`,
          `tls-ca-cert-file ${tls.certFile}`,
          'tls-auth-clients no',
          // Sentinel reaches the data nodes over TLS too.
          'tls-replication yes',
        ]
      : [`port ${port}`]),
    'bind 127.0.0.1',
    `dir ${dir}`,
    ...(sentinelPassword ? [`requirepass ${sentinelPassword}`] : []),
    `sentinel monitor ${masterName} 127.0.0.1 ${primary} ${quorum}`,
    `sentinel down-after-milliseconds ${masterName} ${options.downAfterMs ?? 1000}`,
    `sentinel failover-timeout ${masterName} 10000`,
    `sentinel parallel-syncs ${masterName} 1`,
    ...(password ? [`sentinel auth-pass ${masterName} ${password}`] : []),
  ];
  // Sentinel rewrites its configuration file: it must be its own, writable copy.
  const file = join(dir, 'sentinel.conf');
  writeFileSync(file, `${lines.join('\n')}\n`);
  const child = spawn('redis-server', [file, '--sentinel'], { stdio: 'ignore' });
  const sentinel = { port, child, dir };
  try {
    await eventually(
      `the Sentinel on ${port} to answer`,
      async () => (await askSentinel(port, options, (c) => c.ping())) === 'PONG',
      10_000,
      50,
    );
  } catch (err) {
    await killSentinel(sentinel);
    throw err;
  }
  return sentinel;
}

async function killSentinel(sentinel: SentinelProcess): Promise<void> {
  const { child } = sentinel;
  if (child.exitCode === null && child.signalCode === null) {
    await new Promise<void>((resolve) => {
      child.once('exit', () => resolve());
      child.kill('SIGKILL');
    });
  }
  rmSync(sentinel.dir, { recursive: true, force: true });
}

function askSentinel<T>(
  port: number,
  options: RedisSentinelOptions,
  use: (client: Redis) => Promise<T>,
): Promise<T> {
  const { sentinelPassword, tls } = options;
  return withRedis(
    {
      port,
      enableReadyCheck: false,
      ...(sentinelPassword && { password: sentinelPassword }),
      ...(tls && { tls: { rejectUnauthorized: false } }),
    },
    use,
  );
}
