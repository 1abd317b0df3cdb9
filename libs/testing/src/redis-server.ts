import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis, type RedisOptions } from 'ioredis';
import { freePort } from './ports.js';

export interface RedisServer {
  readonly port: number;
  readonly url: string;
  /** Kills the server (SIGKILL) and starts an empty one on the same port: a Redis that lost its data. */
  restartEmpty(): Promise<void>;
  stop(): Promise<void>;
}

/**
 * Starts a private redis-server on a free loopback port so a test owns its data and can kill or
 * restart it without touching the machine's shared Redis.
 */
export interface RedisServerOptions {
  /** requirepass: clients must authenticate. */
  readonly password?: string;
  /** TLS only (rediss://), with this certificate and key (PEM files); no client certificates. */
  readonly tls?: { readonly certFile: string; readonly keyFile: string };
}

export async function startRedisServer(
  extraArgs: string[] = [],
  options: RedisServerOptions = {},
): Promise<RedisServer> {
  const port = await freePort();
  const dir = mkdtempSync(join(tmpdir(), 'redis-'));
  const { tls, password } = options;
  const args = [
    ...(password ? ['--requirepass', password] : []),
    ...(tls ? ['--port', '0', '--tls-port', String(port), '--tls-auth-clients', 'no'] : []),
    ...(tls ? ['--tls-cert-file', tls.certFile, '--tls-key-file', tls.keyFile] : []),
    ...extraArgs,
  ];
  const probe: RedisOptions = {
    ...(password && { password }),
    ...(tls && { tls: { rejectUnauthorized: false } }),
  };
  let child: ChildProcess = await launch(port, dir, args, probe);
  return {
    port,
    url: `${tls ? 'rediss' : 'redis'}://127.0.0.1:${port}`,
    async restartEmpty() {
      await kill(child);
      child = await launch(port, dir, args, probe);
    },
    async stop() {
      await kill(child);
      rmSync(dir, { recursive: true, force: true });
    },
  };
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
