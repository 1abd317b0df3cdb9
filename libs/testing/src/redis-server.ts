import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis, type RedisOptions } from 'ioredis';
import { freePort } from './ports.js';

export interface RedisServer {
  readonly port: number;
  readonly url: string;
  /** Whether the process is up (false after kill or stop). */
  readonly running: boolean;
  /** Kills the server (SIGKILL) and starts an empty one on the same port: a Redis that lost its data. */
  restartEmpty(): Promise<void>;
  /** Kills the server (SIGKILL) and leaves it dead: a crashed host. */
  kill(): Promise<void>;
  /** Freezes the process (SIGSTOP): it keeps its sockets but answers nothing until resumed. */
  pause(): void;
  resume(): void;
  stop(): Promise<void>;
}

/** TLS on the server's only port (rediss://), with a certificate that is its own CA. */
export interface RedisTls {
  readonly certFile: string;
  readonly keyFile: string;
}

export interface RedisServerOptions {
  /** requirepass: clients must authenticate (replicas too: masterauth is set to the same). */
  readonly password?: string;
  /** TLS only (rediss://), with this certificate and key (PEM files); no client certificates. */
  readonly tls?: RedisTls;
  /** Start as a replica of the server on this port. */
  readonly replicaOf?: number;
}

/**
 * Starts a private redis-server on a free loopback port so a test owns its data and can kill or
 * restart it without touching the machine's shared Redis.
 */
export async function startRedisServer(
  extraArgs: string[] = [],
  options: RedisServerOptions = {},
): Promise<RedisServer> {
  const port = await freePort();
  const dir = mkdtempSync(join(tmpdir(), 'redis-'));
  const args = [...serverAuthArgs(options, port), ...extraArgs];
  const probe = probeOptions(options);
  let child: ChildProcess = await launch(port, dir, args, probe);
  return {
    port,
    url: `${options.tls ? 'rediss' : 'redis'}://127.0.0.1:${port}`,
    get running() {
      return child.exitCode === null && child.signalCode === null;
    },
    async restartEmpty() {
      await kill(child);
      child = await launch(port, dir, args, probe);
    },
    kill: () => kill(child),
    pause: () => void child.kill('SIGSTOP'),
    resume: () => void child.kill('SIGCONT'),
    async stop() {
      await kill(child);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** Arguments for a data node on `port` that needs a password, TLS or a primary. */
function serverAuthArgs(options: RedisServerOptions, port: number): string[] {
  const { tls, password, replicaOf } = options;
  return [
    ...(password ? ['--requirepass', password, '--masterauth', password] : []),
    ...(tls
      ? [
          ...['--port', '0', '--tls-port', String(port), '--tls-auth-clients', 'no'],
          '--tls-replication',
          'yes',
          ...['--tls-cert-file', tls.certFile, '--tls-key-file', tls.keyFile],
          ...['--tls-ca-cert-file', tls.certFile],
        ]
      : []),
    ...(replicaOf !== undefined ? ['--replicaof', '127.0.0.1', String(replicaOf)] : []),
  ];
}

/** ioredis options that reach a server started with these options (self-signed TLS accepted). */
export function probeOptions(options: RedisServerOptions): RedisOptions {
  return {
    ...(options.password && { password: options.password }),
    ...(options.tls && { tls: { rejectUnauthorized: false } }),
  };
}

/** A short-lived client to one server (ports on 127.0.0.1) for an admin command or a probe. */
export async function withRedis<T>(
  options: RedisOptions,
  use: (client: Redis) => Promise<T>,
): Promise<T> {
  const client = new Redis({
    host: '127.0.0.1',
    maxRetriesPerRequest: 0,
    retryStrategy: () => null,
    ...options,
  });
  // A refused connection surfaces as the rejected command; the event would only repeat it.
  client.on('error', () => undefined);
  try {
    return await use(client);
  } finally {
    client.disconnect();
  }
}

/** withRedis for a data node started with these options (password, TLS). */
export function withServer<T>(
  port: number,
  options: RedisServerOptions,
  use: (client: Redis) => Promise<T>,
): Promise<T> {
  return withRedis({ port, ...probeOptions(options) }, use);
}

/**
 * Ports of the replicas a primary counts as online (ROLE). A replica reports its link up once it
 * loaded the primary's data, a moment before the primary puts it online; only then does the
 * primary list it, and only then does a client that reads ROLE wait for it.
 */
export async function onlineReplicaPorts(
  port: number,
  options: RedisServerOptions,
): Promise<number[]> {
  const role = (await withServer(port, options, (c) => c.call('ROLE'))) as unknown[];
  if (role[0] !== 'master') return [];
  return (role[2] as [string, string, string][]).map(([, replicaPort]) => Number(replicaPort));
}

async function launch(
  port: number,
  dir: string,
  extraArgs: string[],
  probe: RedisOptions,
): Promise<ChildProcess> {
  const child = spawn(
    'redis-server',
    [
      '--port',
      String(port),
      '--bind',
      '127.0.0.1',
      '--save',
      '',
      '--appendonly',
      'no',
      '--dir',
      dir,
      ...extraArgs,
    ],
    { stdio: 'ignore' },
  );
  const deadline = Date.now() + 10_000;
  for (;;) {
    const client = new Redis({
      port,
      host: '127.0.0.1',
      lazyConnect: true,
      maxRetriesPerRequest: 0,
      retryStrategy: () => null,
      ...probe,
    });
    // Refused connections while the server boots are expected; they are retried below.
    client.on('error', () => undefined);
    try {
      await client.connect();
      await client.ping();
      client.disconnect();
      return child;
    } catch {
      client.disconnect();
      if (Date.now() > deadline) throw new Error(`redis-server did not answer on port ${port}`);
      await new Promise((r) => setTimeout(r, 50));
    }
  }
}

async function kill(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  await new Promise<void>((resolve) => {
    child.once('exit', () => resolve());
    child.kill('SIGKILL');
  });
}
