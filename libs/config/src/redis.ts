import type { RedisOptions } from 'ioredis';
import type { EnvReader } from './env-reader.js';

export interface RedisConfig {
  readonly host: string;
  readonly port: number;
  readonly db: number;
  readonly username: string | undefined;
  readonly password: string | undefined;
  /** `rediss://`: TLS, verified against the system CAs. */
  readonly tls: boolean;
  /** The URL without credentials, safe to log. */
  readonly address: string;
}

const DEFAULT_URL = 'redis://127.0.0.1:6379';
const EXPECTED =
  'a URL such as redis://host:6379/0 or rediss://user:password@host:6380 (database 0 to 15)';

/**
 * REDIS_URL plus REDIS_PASSWORD, which wins over a password in the URL so that the chart can keep
 * the password in a Secret and the URL in plain values.
 */
export function readRedisConfig(env: EnvReader): RedisConfig {
  const text = env.raw('REDIS_URL') ?? DEFAULT_URL;
  const parsed = parseRedisUrl(text);
  if (!parsed) return env.fail('REDIS_URL', EXPECTED, text, parseRedisUrl(DEFAULT_URL)!);
  const password = env.raw('REDIS_PASSWORD') ?? parsed.password;
  return { ...parsed, password };
}

function parseRedisUrl(text: string): RedisConfig | undefined {
  const url = URL.canParse(text) ? new URL(text) : undefined;
  if (!url || !['redis:', 'rediss:'].includes(url.protocol) || url.hostname === '')
    return undefined;
  const dbText = url.pathname.replace(/^\//, '') || '0';
  const db = /^\d+$/.test(dbText) ? Number(dbText) : -1;
  if (db < 0 || db > 15 || url.search !== '' || url.hash !== '') return undefined;
  return {
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
 * ioredis options for one connection; callers add their own (retry and timeout settings).
 * Built from fields rather than the URL so REDIS_PASSWORD applies.
 */
export function redisOptions(config: RedisConfig, extra: RedisOptions = {}): RedisOptions {
  return {
    host: config.host,
    port: config.port,
    db: config.db,
    ...(config.username !== undefined && { username: config.username }),
    ...(config.password !== undefined && { password: config.password }),
    ...(config.tls && { tls: {} }),
    ...extra,
  };
}
