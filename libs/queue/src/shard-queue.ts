import { randomUUID } from 'node:crypto';
import { Queue, type JobsOptions } from 'bullmq';
import { Cluster } from 'ioredis';
import type { RedisClient } from './connection.js';
import { FencedError, termCurrent } from './fence.js';
import { LuaScript } from './scripts.js';
import { dedupId, type JobIds } from './job-ids.js';
import type { ResolvedQueueOptions } from './options.js';
import { shardKeys, shardLocation, type ShardKeys } from './shard.js';
import { TurnBatch } from './turn-batch.js';

export interface ShardDepth {
  shard: number;
  /** Keys due now, waiting for a consumer (workqueue_depth). */
  ready: number;
  /** Keys waiting for a RequeueAfter, backoff or AddAfter. */
  delayed: number;
  /** Keys being handled right now. */
  running: number;
}

/** What a client has seen of a shard: its epoch, and the highest mark confirmed on the replicas. */
export interface Seen {
  /** '' before the first look. */
  epoch: string;
  /** 0 before the first confirmed write. */
  mark: number;
}

/** The shard's Redis-loss markers as a check found them (see ResetDetector). */
export interface EpochCheck {
  epoch: string;
  /** Time left on the shard's hold after a loss. */
  holdMs: number;
}

/** The mark written after a client's writes, and whether every online replica holds them. */
export interface WriteConfirmation extends Partial<EpochCheck> {
  mark: number;
  replicated: boolean;
}

/** What a consumer learns from Redis just before it runs a key. */
export interface RunStart extends EpochCheck {
  /** Consecutive failures of the key before this run (client-go NumRequeues). */
  failures: number;
  /** The key's failed job kept from an earlier run (its last error), if any. */
  failedJob: string | undefined;
  /** The mark written after the key was claimed. */
  mark: number;
  /** Whether every online replica holds the claim, so that no failover can undo it. */
  replicated: boolean;
}

const raiseFence = new LuaScript(
  'raiseFence',
  1,
  new URL('./commands/raiseFence-1.lua', import.meta.url),
);

/**
 * An upper bound only: each key keeps at most its last failed run (see keepFailedJob), so the
 * count reaches this only with that many keys failing at once in one shard.
 */
const keptFailures = 1_000;
/** BullMQ's event stream is read by nobody here; keep it short. */
const eventsMaxLen = 100;
/** BullMQ's delayed score is the due time in ms times 0x1000 plus a sequence number. */
const delayedScoreFactor = 0x1000;

/** Errors of a Cluster whose slot map moved on (a failover, a resharding). */
const redirected = /^(MOVED|ASK|CLUSTERDOWN|TRYAGAIN) /;

/** PTTL counts whole milliseconds: a hold with less than one left still holds. */
function holdFromPttl(pttl: number): number {
  return pttl >= 0 ? Math.max(1, pttl) : 0;
}

/** A Redis reply as ioredis gives it (MGET's is an array). */
type Reply = string | number | null | Reply[];

/** A Redis command: its name, upper case, and its arguments. */
type RedisCommand = readonly [name: string, ...args: (string | number)[]];

/** Commands without a key, which a Cluster client would send to any node. */
const KEYLESS = new Set(['WAIT', 'ROLE']);

/**
 * Declares the shard's data lost: a new epoch, unless another client already gave it one, and the
 * hold. KEYS: epoch, hold. ARGV: the epoch the caller saw, a fresh epoch, the hold in ms.
 */
const loseScript = `
local current = redis.call('GET', KEYS[1])
if current == false or current == ARGV[1] then
  current = ARGV[2]
  redis.call('SET', KEYS[1], current)
end
redis.call('SET', KEYS[2], '1', 'PX', ARGV[3], 'NX')
return {current, redis.call('PTTL', KEYS[2])}`;

/**
 * One shard: a BullMQ queue plus the few Redis keys BullMQ has no notion of (the per-key failure
 * count, the Redis-loss epoch, hold and mark). All of them share the shard's hash tag.
 *
 * Replication: what the queue relies on is written, then confirmed on every online replica of the
 * shard's primary with WAIT before it is acted on (a consumer's claim of a key before the run, a
 * producer's adds before they count as done). A failover then cannot undo it, unless the promoted
 * replica was not online at the time; the mark catches that case (see ResetDetector).
 *
 * A key is at most one BullMQ run job (deduplication id = key, keepLastIfActive: an add while it
 * runs is kept as its next job) and at most one timer job (a delayed job that adds the key when
 * it falls due). Runs are never delayed or retried by BullMQ, because BullMQ's delayed and retry
 * paths would hold a kept add back until the delay ends.
 */
export class ShardQueue {
  readonly queue: Queue;
  readonly keys: ShardKeys;
  /** Prefix of BullMQ's own keys of this queue (`<prefix>:<queue>:`). */
  private readonly base: string;
  /** Online replicas of the shard's primary when last looked (ROLE): what WAIT waits for. */
  private replicas = 0;
  /** How long a WAIT may take before the write counts as not replicated. */
  private readonly waitMs: number;
  /** The confirmations asked for in one turn share one mark and one WAIT. */
  private readonly confirmations = new TurnBatch<void, WriteConfirmation>(async (asks) => {
    const found = await this.confirmBatch();
    return asks.map(() => found);
  });

  /** `seen`: what this client saw of the shard, read when a check compares with it. */
  constructor(
    readonly shard: number,
    private readonly client: RedisClient,
    private readonly options: ResolvedQueueOptions,
    private readonly ids: JobIds,
    onError: (err: Error) => void,
    private readonly seen: () => Seen,
  ) {
    const location = shardLocation(options.prefix, options.name, shard);
    this.keys = shardKeys(options.prefix, options.name, shard);
    this.base = `${location.prefix}:${location.queueName}:`;
    this.queue = new Queue(location.queueName, {
      connection: client,
      prefix: location.prefix,
      streams: { events: { maxLen: eventsMaxLen } },
    });
    this.queue.on('error', onError);
    this.waitMs = Math.max(100, Math.min(1_000, Math.floor(options.lockDurationMs / 4)));
  }

  /**
   * Makes the key due now (client-go Add). Resolves true if it became pending, false if a run
   * was already pending. A normal add (an event) drops the key's pending timer: the run it asks
   * for starts after the timer was set, so it sees everything the timer was meant to catch. A
   * low-priority add (a resync) leaves the timer: the run will set the same due time again, and
   * dropping and setting it would cost two BullMQ calls per key of every resync.
   * With a leader `term`, the add is refused (FencedError) when a newer term fenced the shard; the
   * check shares the round trip that reads the key's timer.
   */
  async add(key: string, low: boolean, dropTimer = true, term?: number): Promise<boolean> {
    const [timer = null, nextBefore = null, fence = null] = (await this.read([
      ['GET', this.dedupKey('timer', key)],
      ['HGET', this.nextKey(key), 'jid'],
      ...(term === undefined ? [] : [['GET', this.keys.fence] as const]),
    ])) as (string | null)[];
    if (term !== undefined && !termCurrent(term, fence)) {
      throw new FencedError(term, Number(fence));
    }
    // The key already has a kept next run; a low-priority add has nothing to add to it.
    if (low && nextBefore !== null) return false;
    const id = this.ids.next('run', key);
    const [job] = await Promise.all([
      this.queue.add(key, {}, this.runOptions(id, key, low)),
      dropTimer && !low && timer !== null ? this.dropTimer(timer) : undefined,
    ]);
    if (job.id === id) return true;
    // Merged into the key's pending or running job: find out which, and raise a low one.
    const [nextNow, priority] = await this.read([
      ['HGET', this.nextKey(key), 'jid'],
      ['HGET', `${this.base}${job.id}`, 'priority'],
    ]);
    if (nextNow === id) return nextBefore === null;
    if (!low && Number(priority) > 0) {
      // Refused when the job started meanwhile: it then ran after this add anyway.
      await this.queue
        .getBackend()
        .changePriority(String(job.id), 0, false)
        .catch(() => undefined);
    }
    return false;
  }

  /**
   * Makes the key due after `delayMs` unless its timer is due earlier already (the earliest due
   * time wins; read, then moved earlier: a concurrent later timer can win the race, which costs
   * one extra run, never a lost one).
   */
  async addTimer(key: string, delayMs: number): Promise<void> {
    const id = this.ids.next('timer', key);
    const delay = Math.max(1, Math.ceil(delayMs));
    const job = await this.queue.add(
      key,
      {},
      {
        jobId: id,
        delay,
        deduplication: { id: dedupId('timer', key), keepLastIfActive: true },
        removeOnComplete: true,
        removeOnFail: true,
        attempts: 1,
      },
    );
    if (job.id === id) return;
    const score = await this.client.zscore(this.keys.delayed, String(job.id));
    if (score === null) return;
    if (Math.floor(Number(score) / delayedScoreFactor) > Date.now() + delay) {
      await this.queue
        .getBackend()
        .changeDelay(String(job.id), delay)
        .catch(() => undefined); // it fell due meanwhile: it runs now, earlier still
    }
  }

  /** Raises the shard's fence to `term` (never lowers it); returns the fence it now holds. */
  async raiseFence(term: number): Promise<number> {
    return Number(await raiseFence.run(this.client, this.keys.fence, term));
  }

  /** Whether the key's run job waits for a consumer (not running, not absent). */
  async isWaiting(key: string): Promise<boolean> {
    const id = await this.queue.getDeduplicationJobId(dedupId('run', key));
    if (id === null) return false;
    const state = await this.queue.getJobState(id);
    return state === 'waiting' || state === 'prioritized';
  }

  /** Whether an add arrived while the key ran: BullMQ keeps it as the key's next job. */
  async hasNext(key: string): Promise<boolean> {
    return (await this.client.exists(this.nextKey(key))) === 1;
  }

  async incFailures(key: string): Promise<number> {
    return this.client.hincrby(this.keys.fail, key, 1);
  }

  async forget(key: string): Promise<void> {
    await this.client.hdel(this.keys.fail, key);
  }

  /**
   * Makes `jobId` (just moved to failed) the key's one failed job and removes the one it replaces,
   * so the dashboard shows one failed record per failing key: its last error.
   */
  async keepFailedJob(key: string, jobId: string, previous: string | undefined): Promise<void> {
    await this.client.hset(this.keys.failedJob, key, jobId);
    if (previous !== undefined && previous !== jobId) await this.removeJob(previous);
  }

  /** The key succeeded: its failed record goes, since what it said is no longer true. */
  async dropFailedJob(key: string, jobId: string): Promise<void> {
    await this.client.hdel(this.keys.failedJob, key);
    await this.removeJob(jobId);
  }

  private async removeJob(id: string): Promise<void> {
    // Already gone (removeOnFail's bound, a Redis that lost its data): nothing to remove.
    await this.queue.remove(id).catch(() => 0);
  }

  async numRequeues(key: string): Promise<number> {
    return Number((await this.client.hget(this.keys.fail, key)) ?? 0);
  }

  /**
   * The shard's epoch (written if missing) and the hold left; learns the replicas of the shard's
   * primary. When the caller had seen another epoch, Redis lost the shard's data, runs in flight
   * may still be going without a lock, so the shard is held for one lock duration; the first to
   * notice sets the hold. A mark below the one the caller saw confirmed means a failover lost
   * confirmed writes: the shard's data is declared lost (a new epoch that every client notices).
   */
  async checkEpoch(fresh: string, seen: Seen): Promise<EpochCheck> {
    const [, epochReply, holdReply, markReply, role] = await this.read([
      ['SET', this.keys.epoch, fresh, 'NX'],
      ['GET', this.keys.epoch],
      ['PTTL', this.keys.hold],
      ['GET', this.keys.mark],
      ['ROLE'],
    ]);
    this.noteRole(role);
    const epoch = String(epochReply);
    if (seen.epoch !== '' && seen.epoch !== epoch) {
      await this.client.set(this.keys.hold, '1', 'PX', this.options.lockDurationMs, 'NX');
      return { epoch, holdMs: await this.holdLeft() };
    }
    if (Number(markReply ?? 0) < seen.mark) return this.lose(seen.epoch, fresh);
    return { epoch, holdMs: holdFromPttl(Number(holdReply)) };
  }

  /**
   * Writes the mark after the caller's writes to this shard and waits for every online replica to
   * hold them. A mark not above the one the caller saw confirmed means the primary lost confirmed
   * writes: the shard is declared lost and the new epoch and hold are returned with it. The
   * callers of one turn share one mark and WAIT, sent after all of their writes.
   */
  confirmWrites(): Promise<WriteConfirmation> {
    return this.confirmations.call();
  }

  private async confirmBatch(): Promise<WriteConfirmation> {
    const seen = this.seen();
    const replicas = this.replicas;
    const [mark, acked] = await this.read([
      ['INCR', this.keys.mark],
      ...(replicas > 0 ? [['WAIT', replicas, this.waitMs] as const] : []),
    ]);
    return {
      mark: Number(mark),
      replicated: await this.replicated(replicas, acked),
      ...(Number(mark) <= seen.mark && (await this.lose(seen.epoch, randomUUID()))),
    };
  }

  /**
   * Before a run, in one round trip: the mark written after the claim of the key, the epoch and
   * whether the shard is held, the key's failure count and kept failed job, and the replicas'
   * acknowledgement of the claim. The epoch is written (and compared with `seen`) only when it is
   * missing or differs.
   */
  async runStart(key: string, fresh: string, seen: Seen): Promise<RunStart> {
    const replicas = this.replicas;
    const [mark, markers, failures, failedJob, acked] = await this.read([
      ['INCR', this.keys.mark],
      ['MGET', this.keys.epoch, this.keys.hold],
      ['HGET', this.keys.fail, key],
      ['HGET', this.keys.failedJob, key],
      ...(replicas > 0 ? [['WAIT', replicas, this.waitMs] as const] : []),
    ]);
    const [epoch = null, hold = null] = markers as (string | null)[];
    const start: RunStart = {
      epoch: String(epoch),
      // Only a held shard (rare: after a loss) costs a second round trip, for the time left.
      holdMs: hold === null ? 0 : await this.holdLeft(),
      failures: Number(failures ?? 0),
      failedJob: failedJob === null ? undefined : String(failedJob),
      mark: Number(mark),
      replicated: await this.replicated(replicas, acked),
    };
    if (epoch === null || (seen.epoch !== '' && seen.epoch !== start.epoch)) {
      Object.assign(start, await this.checkEpoch(fresh, seen));
    } else if (start.mark <= seen.mark) {
      Object.assign(start, await this.lose(seen.epoch, fresh));
    }
    return start;
  }

  /** Time left on the shard's hold: at least 1 ms while Redis still holds it, 0 once it is gone. */
  async holdLeft(): Promise<number> {
    return holdFromPttl(Number(await this.client.pttl(this.keys.hold)));
  }

  /** Read from BullMQ's lists and sets in one round trip (cheaper than its getJobCounts script). */
  async depth(): Promise<ShardDepth> {
    const [wait, prioritized, delayed, active] = (
      await this.read([
        ['LLEN', this.keys.wait],
        ['ZCARD', this.keys.prioritized],
        ['ZCARD', this.keys.delayed],
        ['LLEN', this.keys.active],
      ])
    ).map(Number);
    return {
      shard: this.shard,
      ready: (wait ?? 0) + (prioritized ?? 0),
      delayed: delayed ?? 0,
      running: active ?? 0,
    };
  }

  close(): Promise<void> {
    return this.queue.close();
  }

  private runOptions(id: string, key: string, low: boolean): JobsOptions {
    return {
      jobId: id,
      deduplication: { id: dedupId('run', key), keepLastIfActive: true },
      ...(low ? { priority: 1 } : {}),
      removeOnComplete: true,
      removeOnFail: { count: keptFailures },
      attempts: 1,
    };
  }

  private async dropTimer(id: string): Promise<void> {
    // A timer that is firing right now is locked and stays; it only adds the key once more.
    await this.queue.remove(id).catch(() => 0);
  }

  /**
   * Whether a WAIT for `asked` replicas was answered by enough of them. When it was not, a replica
   * may have gone away since the replicas were counted: count them again and, if some are left
   * that did not answer, wait for them once more on the same connection.
   */
  private async replicated(asked: number, acked: unknown): Promise<boolean> {
    if (Number(acked ?? 0) >= asked) return true;
    const [, role] = await this.read([['EXISTS', this.keys.epoch], ['ROLE']]);
    this.noteRole(role);
    if (Number(acked) >= this.replicas) return true;
    const [, again] = await this.read([
      ['EXISTS', this.keys.epoch],
      ['WAIT', this.replicas, this.waitMs],
    ]);
    return Number(again) >= this.replicas;
  }

  /** ROLE of the shard's primary: `['master', offset, [[host, port, offset], ...]]`. */
  private noteRole(role: unknown): void {
    if (Array.isArray(role) && role[0] === 'master' && Array.isArray(role[2])) {
      this.replicas = role[2].length;
    }
  }

  private async lose(seen: string, fresh: string): Promise<EpochCheck> {
    const [epoch, holdMs] = (await this.client.eval(
      loseScript,
      2,
      this.keys.epoch,
      this.keys.hold,
      seen,
      fresh,
      this.options.lockDurationMs,
    )) as [string, number];
    return { epoch, holdMs: holdFromPttl(holdMs) };
  }

  private dedupKey(kind: 'run' | 'timer', key: string): string {
    return `${this.base}de:${dedupId(kind, key)}`;
  }

  private nextKey(key: string): string {
    return `${this.base}dn:${dedupId('run', key)}`;
  }

  /**
   * Commands on this shard's keys (one slot), replies in order, in one round trip. They are sent
   * as plain commands, which the connection puts in one write (cork-each-turn.ts); an ioredis
   * pipeline costs more to build than these commands do to send (its constructor copies every
   * script the client knows, BullMQ's included: half the watcher's CPU per key add). Only on a
   * Cluster do keyless commands (WAIT, ROLE) go in a pipeline, which sends them to the node of the
   * pipeline's keys, where alone they mean anything; one server or a Sentinel's primary is one
   * connection, which WAIT needs too. ioredis does not follow a Cluster's redirections for such a
   * pipeline (it cannot tell whether resending them is safe), so a redirection fails the call and
   * refreshes the slot map for the retry.
   */
  private async read(commands: readonly RedisCommand[]): Promise<Reply[]> {
    const client = this.client;
    if (!(client instanceof Cluster) || !commands.some(([name]) => KEYLESS.has(name))) {
      return (await Promise.all(
        commands.map(([name, ...args]) => client.call(name, ...args)),
      )) as Reply[];
    }
    const pipeline = client.pipeline();
    for (const [name, ...args] of commands) void pipeline.call(name, ...args);
    const replies = (await pipeline.exec()) ?? [];
    return replies.map(([err, value]) => {
      if (err) {
        if (redirected.test(err.message)) client.refreshSlotsCache();
        throw err;
      }
      return value as Reply;
    });
  }
}
