import { randomUUID } from 'node:crypto';
import type { RedisClient } from './connection.js';
import type { ResolvedQueueOptions } from './options.js';
import { defineScripts, type ScriptCommands } from './scripts.js';
import { shardKeys, shardOf, type ShardKeys } from './shard.js';

/** Score offset of low-priority keys in `ready`; must match LOW_PRIORITY_OFFSET in the scripts. */
const lowPriorityOffset = 4e15;

export type Outcome = 'ok' | 'after' | 'error' | 'terminal' | 'release';

export interface TakenKey {
  key: string;
  token: string;
  /** Redis time (ms) the key became pending. */
  enqueuedAt: number;
  /** Consecutive failures before this run (client-go NumRequeues). */
  failures: number;
}

export interface FinishAndTakeResult {
  /** 1 finished, 0 nothing to finish, -1 the run no longer owned its key. */
  finished: number;
  /** Redis time (ms) of the step. */
  now: number;
  /** When nothing was taken: how long until something falls due. */
  sleepMs: number;
  /** Delayed keys that became pending in this step. */
  promoted: number;
  /** The shard's Redis-loss marker (see ResetDetector). */
  epoch: string;
  taken: TakenKey[];
}

export interface FinishRequest {
  key: string;
  token: string;
  outcome: Outcome;
  requeueAfterMs?: number;
}

export interface ShardDepth {
  shard: number;
  /** Keys due now, waiting for a consumer (workqueue_depth). */
  ready: number;
  /** Keys waiting for a RequeueAfter, backoff or AddAfter. */
  delayed: number;
  /** Keys being handled right now. */
  running: number;
}

/** Typed access to one queue's Redis data: the scripts, per shard. */
export class QueueStore {
  private readonly scripts: ScriptCommands;
  private readonly keysByShard: ShardKeys[];
  private tokenSeq = 0;
  private readonly tokenPrefix = `${randomUUID()}:`;

  constructor(
    readonly client: RedisClient,
    readonly options: ResolvedQueueOptions,
  ) {
    this.scripts = defineScripts(client);
    this.keysByShard = Array.from({ length: options.shards }, (_, shard) =>
      shardKeys(options.prefix, options.name, shard),
    );
  }

  shardOf(key: string): number {
    return shardOf(key, this.options.shards);
  }

  keys(shard: number): ShardKeys {
    const keys = this.keysByShard[shard];
    if (!keys) throw new RangeError(`shard ${shard} is outside 0..${this.options.shards - 1}`);
    return keys;
  }

  /** Returns how many keys became pending (duplicates of pending keys are not counted). */
  async addKeys(shard: number, keys: string[], delayMs: number, low: boolean): Promise<number> {
    const k = this.keys(shard);
    const pending = await this.scripts.addKeys(
      k.ready,
      k.delayed,
      k.leases,
      k.dirty,
      k.notify,
      Math.max(0, Math.ceil(delayMs)),
      low ? 1 : 0,
      ...keys,
    );
    return Number(pending);
  }

  async finishAndTake(
    shard: number,
    finish: FinishRequest | undefined,
    take: number,
    maxSleepMs: number,
    seenEpoch: string,
  ): Promise<FinishAndTakeResult> {
    const k = this.keys(shard);
    const seq = this.tokenSeq;
    this.tokenSeq += take;
    const reply = (await this.scripts.finishAndTake(
      k.ready,
      k.delayed,
      k.leases,
      k.owner,
      k.dirty,
      k.fail,
      k.notify,
      k.epoch,
      k.hold,
      finish?.key ?? '',
      finish?.token ?? '',
      finish?.outcome ?? 'ok',
      Math.max(0, Math.ceil(finish?.requeueAfterMs ?? 0)),
      this.options.backoff.baseMs,
      this.options.backoff.maxMs,
      take,
      this.options.lockDurationMs,
      this.tokenPrefix,
      seq,
      Math.max(1, Math.round(maxSleepMs)),
      randomUUID(),
      seenEpoch,
    )) as (string | number)[];
    const taken: TakenKey[] = [];
    for (let i = 5; i + 2 < reply.length; i += 3) {
      const score = Number(reply[i + 1]);
      taken.push({
        key: String(reply[i]),
        token: `${this.tokenPrefix}${seq + taken.length}`,
        enqueuedAt: (score >= lowPriorityOffset ? score - lowPriorityOffset : score) / 1000,
        failures: Number(reply[i + 2]),
      });
    }
    return {
      finished: Number(reply[0]),
      now: Number(reply[1]),
      sleepMs: Number(reply[2]),
      promoted: Number(reply[3]),
      epoch: String(reply[4]),
      taken,
    };
  }

  /** Extends the leases of running keys; false for each key whose lease was lost. */
  async extendLeases(shard: number, runs: { key: string; token: string }[]): Promise<boolean[]> {
    const k = this.keys(shard);
    const args = runs.flatMap((r) => [r.key, r.token]);
    const reply = (await this.scripts.extendLeases(
      k.leases,
      k.owner,
      this.options.lockDurationMs,
      ...args,
    )) as number[];
    return reply.map((v) => v === 1);
  }

  /** The shard's epoch; holds the shard when it differs from `seenEpoch` (see checkEpoch.lua). */
  async checkEpoch(shard: number, fresh: string, seenEpoch: string): Promise<string> {
    const k = this.keys(shard);
    const epoch = await this.scripts.checkEpoch(
      k.epoch,
      k.hold,
      fresh,
      seenEpoch,
      this.options.lockDurationMs,
    );
    return String(epoch);
  }

  async depth(shard: number): Promise<ShardDepth> {
    const k = this.keys(shard);
    // One shard's keys share a slot, so this pipeline is valid on a Cluster too.
    const replies = await this.client
      .pipeline()
      .zcard(k.ready)
      .zcard(k.delayed)
      .zcard(k.leases)
      .exec();
    const [ready, delayed, running] = (replies ?? []).map(([err, value]) => {
      if (err) throw err;
      return Number(value);
    });
    return { shard, ready: ready ?? 0, delayed: delayed ?? 0, running: running ?? 0 };
  }

  async forget(key: string): Promise<void> {
    await this.client.hdel(this.keys(this.shardOf(key)).fail, key);
  }

  async numRequeues(key: string): Promise<number> {
    return Number((await this.client.hget(this.keys(this.shardOf(key)).fail, key)) ?? 0);
  }
}
