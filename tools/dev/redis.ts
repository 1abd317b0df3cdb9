import { accessSync, constants } from 'node:fs';
import { delimiter, join } from 'node:path';
import { startRedisServer, type RedisServer } from '#testing';

export interface SandboxRedis {
  url: string;
  /** How the sandbox found it, for the banner. */
  origin: string;
  /** Set when the sandbox started its own server (stopped with the sandbox). */
  server: RedisServer | undefined;
}

/** What a command that needs Redis says when it finds none. */
export function noRedisMessage(command: string): string {
  return `${command} needs Redis 7, and none was found:
  REDIS_URL is not set and there is no redis-server on PATH.
Either install Redis so that redis-server is on PATH (Debian/Ubuntu: sudo apt-get install redis-server;
macOS: brew install redis), or point it at a running Redis:
  REDIS_URL=redis://127.0.0.1:6379 ${command}
(its queue keys then live in that Redis).`;
}

/** The full path of an executable on PATH, or undefined. */
export function findOnPath(name: string, path = process.env.PATH ?? ''): string | undefined {
  for (const dir of path.split(delimiter).filter(Boolean)) {
    const candidate = join(dir, name);
    try {
      accessSync(candidate, constants.X_OK);
      return candidate;
    } catch {
      // not in this directory
    }
  }
  return undefined;
}

/** REDIS_URL if set, else a private redis-server on a free port; throws noRedisMessage otherwise. */
export async function sandboxRedis(
  env: NodeJS.ProcessEnv,
  command = 'npm run dev',
): Promise<SandboxRedis> {
  if (env.REDIS_URL) return { url: env.REDIS_URL, origin: 'REDIS_URL', server: undefined };
  const binary = findOnPath('redis-server', env.PATH);
  if (!binary) throw new Error(noRedisMessage(command));
  const server = await startRedisServer();
  return { url: server.url, origin: `private ${binary}`, server };
}
