import {
  failOverRedisPrimary,
  jsonLines,
  type ManagedProcess,
  type OperatorSystem,
  type RedisMode,
} from '#testing';
import { USERS } from '../e2e/support.js';
import type { Rng } from './rng.js';
import type { Supervisor } from './supervisor.js';

/** What a fault gets to work with. */
export interface FaultContext {
  readonly sys: OperatorSystem;
  readonly rng: Rng;
  readonly supervisor: Supervisor;
  /** How long a Lease lasts in this system, so a pause can outlast it. */
  readonly leaseDurationMs: number;
  /** Processes a fault stopped (SIGSTOP) and has not resumed yet: resumed on cleanup. */
  readonly stopped: Set<ManagedProcess>;
}

/**
 * One kind of fault: injects it, waits while it lasts, ends it, and says what it did. Returns
 * undefined when it found nothing to act on (no running leader, a pause already under way).
 */
export interface Fault {
  readonly name: string;
  /** The Redis modes it applies to; all when absent. */
  readonly modes?: readonly RedisMode[];
  inject(ctx: FaultContext): Promise<string | undefined>;
}

const RESOURCES = ['backupjobs', 'cronjobs', 'jobs', 'leases', 'events'];
const VERBS = ['get', 'list', 'watch', 'create', 'update', 'patch', 'delete'];

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** The watcher that most recently became leader and still runs, by its own log. */
function currentLeader(sys: OperatorSystem): ManagedProcess | undefined {
  let leader: ManagedProcess | undefined;
  let since = -Infinity;
  for (const w of sys.watchers.filter((p) => p.running)) {
    for (const line of jsonLines(w)) {
      if (line.msg !== 'became leader') continue;
      const at = Date.parse(line.time);
      if (at > since) [leader, since] = [w, at];
    }
  }
  return leader;
}

export const FAULTS: readonly Fault[] = [
  {
    name: 'kill-worker',
    async inject({ rng, supervisor }) {
      const running = supervisor.runningWorkers();
      if (running.length === 0) return undefined;
      const victim = rng.pick(running);
      supervisor.kill(victim);
      return `SIGKILL ${victim.name}`;
    },
  },
  {
    name: 'kill-watcher',
    async inject({ rng, supervisor }) {
      const running = supervisor.runningWatchers();
      if (running.length === 0) return undefined;
      const victim = rng.pick(running);
      supervisor.kill(victim);
      return `SIGKILL ${victim.name}`;
    },
  },
  {
    name: 'pause-leader',
    async inject({ sys, stopped, leaseDurationMs, rng }) {
      const leader = currentLeader(sys);
      if (!leader || stopped.size > 0) return undefined;
      const pauseMs = Math.round(leaseDurationMs + rng.between(1000, 3000));
      leader.child.kill('SIGSTOP');
      stopped.add(leader);
      await sleep(pauseMs);
      stopped.delete(leader);
      leader.child.kill('SIGCONT');
      return `SIGSTOP ${leader.name} (the leader) for ${pauseMs} ms, past its lease`;
    },
  },
  {
    name: 'redis-restart',
    modes: ['standalone'],
    async inject({ sys }) {
      await sys.redis!.restartEmpty();
      return 'Redis restarted empty';
    },
  },
  {
    name: 'redis-failover',
    modes: ['cluster', 'sentinel'],
    async inject({ sys }) {
      // Each killed primary stays down: once no primary has a replica left, there is none to do.
      const done = await failOverRedisPrimary(sys).catch(() => undefined);
      if (!done) return undefined;
      const shard = done.shard === undefined ? '' : ` (serving shard ${done.shard})`;
      return `${done.mode} primary on ${done.killed}${shard} SIGKILLed, ${done.promoted} promoted`;
    },
  },
  {
    name: 'watch-drop',
    async inject({ sys, rng }) {
      const resource = rng.chance(0.5) ? rng.pick(RESOURCES.slice(0, 3)) : undefined;
      const n = sys.emulator.watches.drop({ user: USERS.watcher, resource });
      return `dropped ${n} watches of ${resource ?? 'every resource'}`;
    },
  },
  {
    name: 'watch-expire',
    async inject({ sys, rng }) {
      // The history the watches would resume from is gone: they and the next few get 410.
      sys.emulator.compact();
      const next = 1 + rng.int(3);
      sys.emulator.watches.expireNextWatches(next, { user: USERS.watcher });
      const n = sys.emulator.watches.expire({ user: USERS.watcher });
      return `history compacted, ${n} watches expired (410), the next ${next} too`;
    },
  },
  {
    name: 'error-storm',
    async inject({ sys, rng }) {
      const code = rng.pick([429, 500]);
      const verbs = VERBS.filter(() => rng.chance(0.4));
      const resource = rng.chance(0.8) ? rng.pick(RESOURCES) : undefined;
      const rate = Math.round(rng.between(0.3, 1) * 100) / 100;
      const ms = Math.round(rng.between(1000, 5000));
      const id = sys.emulator.faults.addError({
        match: { ...(verbs.length > 0 ? { verb: verbs } : {}), ...(resource ? { resource } : {}) },
        code,
        rate,
        ...(code === 429 ? { retryAfterSeconds: 1 } : {}),
      });
      await sleep(ms);
      sys.emulator.faults.remove(id);
      return `${code} on ${rate * 100}% of ${verbs.join('/') || 'every verb'} ${resource ?? 'everything'} for ${ms} ms`;
    },
  },
  {
    name: 'latency-spike',
    async inject({ sys, rng }) {
      const fixedMs = Math.round(rng.between(100, 1000));
      const resource = rng.chance(0.7) ? rng.pick(RESOURCES) : undefined;
      const ms = Math.round(rng.between(1000, 5000));
      const id = sys.emulator.faults.addLatency({
        match: resource ? { resource } : undefined,
        fixedMs,
        jitterMs: fixedMs / 2,
      });
      await sleep(ms);
      sys.emulator.faults.remove(id);
      return `${fixedMs} ms more latency on ${resource ?? 'everything'} for ${ms} ms`;
    },
  },
];

/**
 * The faults named in `names` ('all' for every one that applies to the Redis mode); an unknown
 * name, or one that does not apply to the mode, is an error that says so.
 */
export function selectFaults(names: readonly string[], mode: RedisMode): Fault[] {
  const applies = (f: Fault) => !f.modes || f.modes.includes(mode);
  if (names.length === 0 || names.includes('all')) return FAULTS.filter(applies);
  return names.map((name) => {
    const fault = FAULTS.find((f) => f.name === name);
    if (!fault) {
      throw new Error(`unknown fault "${name}"; known: ${FAULTS.map((f) => f.name).join(', ')}`);
    }
    if (!applies(fault))
      throw new Error(`fault "${name}" needs Redis ${fault.modes?.join(' or ')}`);
    return fault;
  });
}
