import type { ClusterOptions, RedisOptions } from 'ioredis';
import type { EnvReader } from './env-reader.js';

export interface RedisEndpoint {
  readonly host: string;
  readonly port: number;
}

interface RedisCommon {
  /** ACL user (REDIS_USERNAME, or the URL's); undefined: the default user. */
  readonly username: string | undefined;
  readonly password: string | undefined;
  /** TLS to every node (and Sentinel), verified against the system CAs and NODE_EXTRA_CA_CERTS. */
  readonly tls: boolean;
  /** Where Redis is, without credentials, safe to log. */
  readonly address: string;
}

/** One server (or a managed primary endpoint) at REDIS_URL. */
export interface StandaloneRedisConfig extends RedisCommon {
  readonly mode: 'standalone';
  readonly host: string;
  readonly port: number;
  readonly db: number;
}

/** A Redis Cluster reached through any of its nodes (REDIS_CLUSTER_NODES). */
export interface ClusterRedisConfig extends RedisCommon {
  readonly mode: 'cluster';
  readonly nodes: readonly RedisEndpoint[];
}

/** A primary whose address the Sentinels give (REDIS_SENTINELS, REDIS_SENTINEL_MASTER). */
export interface SentinelRedisConfig extends RedisCommon {
  readonly mode: 'sentinel';
  readonly sentinels: readonly RedisEndpoint[];
  readonly masterName: string;
  /** The Sentinels' own password (REDIS_SENTINEL_PASSWORD), when they require one. */
  readonly sentinelPassword: string | undefined;
}

export type RedisConfig = StandaloneRedisConfig | ClusterRedisConfig | SentinelRedisConfig;

const DEFAULT_URL = 'redis://127.0.0.1:6379';
const EXPECTED_URL =
  'a URL such as redis://host:6379/0 or rediss://user:password@host:6380 (database 0 to 15)';
const EXPECTED_NODES = 'a comma-separated list of host:port, such as redis-0:6379,redis-1:6379';
/** A DNS name, an IPv4 address or a bracketed IPv6 address, then an optional :port. */
const ENDPOINT = /^(\[[0-9a-fA-F:.]+\]|[A-Za-z0-9]([A-Za-z0-9.-]*[A-Za-z0-9])?)(:(\d{1,5}))?$/;

/**
 * The Redis to use, in one of three modes chosen by which variables are set: REDIS_URL (one
 * server, the default), REDIS_CLUSTER_NODES (a Redis Cluster), or REDIS_SENTINELS with
 * REDIS_SENTINEL_MASTER (a Sentinel-managed primary). REDIS_USERNAME, REDIS_PASSWORD and REDIS_TLS
 * apply in every mode; REDIS_PASSWORD wins over a password in the URL so that the chart can keep
 * the password in a Secret and the URL in plain values.
 */
export function readRedisConfig(env: EnvReader): RedisConfig {
  const url = env.raw('REDIS_URL');
  const clusterNodes = env.raw('REDIS_CLUSTER_NODES');
  const sentinels = env.raw('REDIS_SENTINELS');
  const selecting = [
    url !== undefined && 'REDIS_URL',
    clusterNodes !== undefined && 'REDIS_CLUSTER_NODES',
    sentinels !== undefined && 'REDIS_SENTINELS',
  ].filter((name): name is string => name !== false);
  if (selecting.length > 1) {
    env.conflict(
      `${selecting.join(' and ')} each select a Redis mode (one server, Cluster, Sentinel): set only one of them`,
    );
  }
  const masterName = env.raw('REDIS_SENTINEL_MASTER');
  if (sentinels !== undefined && masterName === undefined) {
    env.conflict(
      'REDIS_SENTINELS needs REDIS_SENTINEL_MASTER, the master name the Sentinels monitor',
    );
  }
  const sentinelPassword = env.raw('REDIS_SENTINEL_PASSWORD');
  if (sentinels === undefined) {
    for (const name of ['REDIS_SENTINEL_MASTER', 'REDIS_SENTINEL_PASSWORD']) {
      if (env.raw(name) !== undefined) {
        env.conflict(`${name} is set but REDIS_SENTINELS is not: Sentinel mode needs both`);
      }
    }
  }
  const auth = {
    username: env.raw('REDIS_USERNAME'),
    password: env.raw('REDIS_PASSWORD'),
    tls: readTls(env),
  };
  if (clusterNodes !== undefined && selecting.length === 1) {
    const nodes = endpoints(env, 'REDIS_CLUSTER_NODES', 6379);
    const tls = auth.tls ?? false;
    return {
      mode: 'cluster',
      ...auth,
      tls,
      nodes,
      address: `${tls ? 'rediss' : 'redis'}+cluster://${nodes.map(hostPort).join(',')}`,
    };
  }
  if (sentinels !== undefined && selecting.length === 1) {
    const list = endpoints(env, 'REDIS_SENTINELS', 26379);
    const tls = auth.tls ?? false;
    const name = masterName ?? '';
    return {
      mode: 'sentinel',
      ...auth,
      tls,
      sentinels: list,
      masterName: name,
      sentinelPassword,
      address: `${tls ? 'rediss' : 'redis'}+sentinel://${list.map(hostPort).join(',')}/${name}`,
    };
  }
  return readStandalone(env, url ?? DEFAULT_URL, auth);
}

function readStandalone(
  env: EnvReader,
  text: string,
  auth: { username?: string; password?: string; tls?: boolean },
): StandaloneRedisConfig {
  const parsed = parseRedisUrl(text) ?? env.fail('REDIS_URL', EXPECTED_URL, text, defaults());
  if (auth.tls !== undefined && auth.tls !== parsed.tls) {
    env.conflict(
      `REDIS_TLS=${auth.tls} contradicts the ${parsed.tls ? 'rediss' : 'redis'}:// scheme of REDIS_URL: with one server, the scheme says whether TLS is used (unset REDIS_TLS or change the scheme)`,
    );
  }
  return {
    ...parsed,
    username: auth.username ?? parsed.username,
    password: auth.password ?? parsed.password,
  };
}

function defaults(): StandaloneRedisConfig {
  return parseRedisUrl(DEFAULT_URL) as StandaloneRedisConfig;
}

function readTls(env: EnvReader): boolean | undefined {
  const value = env.raw('REDIS_TLS');
  if (value === undefined) return undefined;
  return env.oneOf('REDIS_TLS', ['true', 'false'], 'false') === 'true';
}

function endpoints(env: EnvReader, name: string, defaultPort: number): RedisEndpoint[] {
  const list = env.list(name, ENDPOINT, EXPECTED_NODES);
  const parsed = list.map((item) => {
    const match = ENDPOINT.exec(item) as RegExpExecArray;
    return {
      host: (match[1] as string).replace(/^\[(.*)\]$/, '$1'),
      port: match[4] === undefined ? defaultPort : Number(match[4]),
    };
  });
  const bad = parsed.find((e) => e.port < 1 || e.port > 65535);
  if (bad) return env.fail(name, EXPECTED_NODES, hostPort(bad), []);
  return parsed;
}

function hostPort(endpoint: RedisEndpoint): string {
  return endpoint.host.includes(':')
    ? `[${endpoint.host}]:${endpoint.port}`
    : `${endpoint.host}:${endpoint.port}`;
}

function parseRedisUrl(text: string): StandaloneRedisConfig | undefined {
  const url = URL.canParse(text) ? new URL(text) : undefined;
  if (!url || !['redis:', 'rediss:'].includes(url.protocol) || url.hostname === '')
    return undefined;
  const dbText = url.pathname.replace(/^\//, '') || '0';
  const db = /^\d+$/.test(dbText) ? Number(dbText) : -1;
  if (db < 0 || db > 15 || url.search !== '' || url.hash !== '') return undefined;
  return {
    mode: 'standalone',
    host: url.hostname.replace(/^\[(.*)\]$/, '$1'),
    port: Number(url.port || 6379),
    db,
    username: decodeURIComponent(url.username) || undefined,
    password: decodeURIComponent(url.password) || undefined,
    tls: url.protocol === 'rediss:',
    address: `${url.protocol}//${url.host}/${db}`,
  };
}

/**
 * How to reach Redis with ioredis: `redis` options for one server or a Sentinel-managed primary
 * (ioredis asks the Sentinels), `cluster` seed nodes and options for a Cluster. The shape is the
 * queue library's RedisConnectionConfig. Built from fields rather than the URL so REDIS_PASSWORD
 * applies. Behaviour (retries, failover handling) is the client factory's business, not this.
 */
export type RedisConnection =
  | { readonly redis: RedisOptions; readonly cluster?: undefined }
  | {
      readonly redis?: undefined;
      readonly cluster: { nodes: RedisEndpoint[]; options: ClusterOptions };
    };

export function redisConnection(config: RedisConfig): RedisConnection {
  const auth: RedisOptions = {
    ...(config.username !== undefined && { username: config.username }),
    ...(config.password !== undefined && { password: config.password }),
    ...(config.tls && { tls: {} }),
  };
  switch (config.mode) {
    case 'standalone':
      return { redis: { host: config.host, port: config.port, db: config.db, ...auth } };
    case 'sentinel':
      return {
        redis: {
          sentinels: config.sentinels.map((s) => ({ ...s })),
          name: config.masterName,
          ...auth,
          ...(config.sentinelPassword !== undefined && {
            sentinelPassword: config.sentinelPassword,
          }),
          // ioredis uses `tls` for the primary only when told to; the Sentinels get their own.
          ...(config.tls && { enableTLSForSentinelMode: true, sentinelTLS: {} }),
        },
      };
    case 'cluster':
      return {
        cluster: {
          nodes: config.nodes.map((n) => ({ ...n })),
          options: {
            redisOptions: auth,
            // With TLS, connect by the names given so that certificates issued for them verify
            // (ioredis would otherwise resolve them to addresses first).
            ...(config.tls && {
              dnsLookup: (address: string, done: (err: null, address: string) => void) =>
                done(null, address),
            }),
          },
        },
      };
  }
}
