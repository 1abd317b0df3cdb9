import {
  externalRedis,
  findOnPath,
  startRedisDeployment,
  type RedisDeployment,
  type RedisMode,
} from '#testing';

export interface SandboxRedis {
  readonly mode: RedisMode;
  /** The environment that points the operator at it (REDIS_URL, REDIS_CLUSTER_NODES, ...). */
  readonly env: Readonly<Record<string, string>>;
  /** Where it is, for the banner. */
  readonly address: string;
  /** How the sandbox found it, for the banner. */
  readonly origin: string;
  readonly deployment: RedisDeployment;
  /** Whether the sandbox started it (and stops it with itself). */
  readonly owned: boolean;
}

/** The variables by which a user names a Redis of their own, one per mode. */
const OWN_REDIS = ['REDIS_URL', 'REDIS_CLUSTER_NODES', 'REDIS_SENTINELS'] as const;

/** What a command that needs Redis says when it finds none. */
function noRedisMessage(command: string): string {
  return `${command} needs Redis 7, and none was found:
  REDIS_URL is not set and there is no redis-server on PATH.
Either install Redis so that redis-server is on PATH (Debian/Ubuntu: sudo apt-get install redis-server;
macOS: brew install redis), or point it at a running Redis:
  REDIS_URL=redis://127.0.0.1:6379 ${command}
(its queue keys then live in that Redis).`;
}

const TOPOLOGY: Record<RedisMode, string> = {
  standalone: 'redis-server',
  cluster: 'Redis Cluster of 3 primaries with a replica each',
  sentinel: 'primary, replica and Sentinel',
};

/**
 * The sandbox's Redis: the user's own if REDIS_URL, REDIS_CLUSTER_NODES or REDIS_SENTINELS is set
 * (with the other REDIS_* variables, as the operator reads them), else a private one of the asked
 * mode started from the redis-server on PATH; throws noRedisMessage when there is none.
 */
export async function sandboxRedis(
  env: NodeJS.ProcessEnv,
  mode: RedisMode = 'standalone',
  command = 'npm run dev',
): Promise<SandboxRedis> {
  const own = OWN_REDIS.find((name) => env[name]);
  if (own) {
    if (mode !== 'standalone') {
      throw new Error(
        `--redis ${mode} starts a private ${TOPOLOGY[mode]}; ${own} names a Redis of your own: unset one of them`,
      );
    }
    const deployment = externalRedis(env);
    return { ...describe(deployment), origin: own, deployment, owned: false };
  }
  const binary = findOnPath('redis-server', env.PATH);
  if (!binary) throw new Error(noRedisMessage(command));
  const deployment = await startRedisDeployment(mode);
  return {
    ...describe(deployment),
    origin: `private ${TOPOLOGY[mode]} from ${binary}`,
    deployment,
    owned: true,
  };
}

function describe(deployment: RedisDeployment) {
  return { mode: deployment.mode, env: deployment.env, address: deployment.address };
}
