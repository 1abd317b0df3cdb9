import { Cluster, Redis, type RedisOptions } from 'ioredis';
import type { RedisConnectionConfig } from './options.js';
import { corkEachTurn } from './cork-each-turn.js';

export type RedisClient = Redis | Cluster;

/**
 * Opens a client for one server, a Sentinel-managed primary (`redis.sentinels`) or a Cluster.
 * Commands fail after a bounded number of reconnect attempts instead of waiting forever, so a lost
 * Redis surfaces as errors the queue retries, never as a hung promise. `extra` adds options for
 * every connection (e.g. `connectionName`).
 *
 * Failover: a Cluster follows MOVED and ASK redirections and refreshes its slot map when a node
 * goes away (clusterRetryStrategy only covers losing every node). With Sentinels, ioredis asks them
 * for the primary on every reconnect, checks the role of what it reached, and with
 * `failoverDetector` drops the connection as soon as a Sentinel announces a new primary; a
 * primary that was demoted and answers READONLY makes the client reconnect too.
 */
export function createRedisClient(
  config: RedisConnectionConfig,
  extra: RedisOptions = {},
): RedisClient {
  const common = { maxRetriesPerRequest: 3, ...extra };
  if (config.cluster) {
    return corkEachTurn(
      new Cluster(config.cluster.nodes, {
        // ioredis refreshes its slot map on a redirection only; reading it now and then also moves
        // connections that sit idle through a failover to the new primaries.
        slotsRefreshInterval: 5_000,
        ...config.cluster.options,
        redisOptions: { ...common, ...config.cluster.options?.redisOptions },
        clusterRetryStrategy: reconnectDelay,
      }),
    );
  }
  const options: RedisOptions = {
    ...common,
    retryStrategy: reconnectDelay,
    reconnectOnError: (err) => (err.message.startsWith('READONLY') ? 2 : false),
    ...config.redis,
  };
  if (options.sentinels !== undefined)
    return corkEachTurn(new Redis(withFailoverDetector(options)));
  return corkEachTurn(
    config.url !== undefined ? new Redis(config.url, options) : new Redis(options),
  );
}

function withFailoverDetector(options: RedisOptions): RedisOptions & { replyMapping: 'legacy' } {
  return { ...options, failoverDetector: true, replyMapping: 'legacy' };
}

/** Reconnect forever with a capped delay: Redis coming back is the normal end of an outage. */
function reconnectDelay(attempt: number): number {
  return Math.min(50 * attempt, 2_000);
}

/** A second connection to the same Redis, for blocking commands that would stall the first. */
export function duplicateClient(client: RedisClient): RedisClient {
  return corkEachTurn(client instanceof Cluster ? client.duplicate() : client.duplicate());
}

/**
 * Counts the connections of a client that closed: the one connection of a single client, or the
 * connection to any node of a Cluster. A write acknowledged on a connection and confirmed after
 * it closed may have been confirmed on another one (ioredis resends unanswered commands after a
 * reconnect, a Cluster sends them to the node that took the slot over), so such a confirmation
 * does not count. A Cluster's new connections (a node discovered) change nothing written before.
 */
export class ConnectionChanges {
  private count = 0;
  private readonly bump = (): void => {
    this.count++;
  };

  constructor(client: RedisClient) {
    if (client instanceof Cluster) {
      const watch = (node: Redis) => node.on('close', this.bump);
      for (const node of client.nodes()) watch(node);
      client.on('+node', watch);
    } else {
      client.on('close', this.bump);
    }
  }

  /** Changes so far; compare two readings to learn whether one happened in between. */
  get current(): number {
    return this.count;
  }
}
