import { parseArgs } from 'node:util';
import { parseDuration } from '#config';
import type { RedisMode } from '#testing';
import { FAULTS } from './faults.js';

export interface SoakOptions {
  readonly durationMs: number;
  readonly seed: number;
  readonly faults: readonly string[];
  readonly backupJobs: number;
  readonly watchers: number;
  readonly workers: number;
  /** The Redis the operator runs on (its failover is in the fault mix when not standalone). */
  readonly redis: RedisMode;
  /** How long after the faults stop every BackupJob has to be right: the stated bound. */
  readonly convergeWithinMs: number;
  readonly help: boolean;
}

export const USAGE = `usage: npm run soak -- [--duration D] [--seed N] [--faults a,b,...] [--backupjobs N]
                       [--watchers N] [--workers N] [--redis MODE] [--converge-within D]

Runs the whole operator (watchers and workers as processes, the API emulator, a private Redis)
while BackupJob specs churn (changes, A→B→A flips, deletes and re-creates) and faults are injected
at random. When the faults stop, every BackupJob must be right within --converge-within, and
over the whole run no key may have run twice at once and every write must have carried its
precondition. Prints each violation with the object's history, ends with
"seed N: F faults, V violations", and exits 1 on any violation.

  --duration D          how long faults and churn go on (default 60s)
  --seed N              the seed of the churn and of the fault schedule (default: random, printed)
  --faults a,b,...      which faults (default all): ${FAULTS.map((f) => f.name).join(', ')}
  --backupjobs N        BackupJobs at the start (default 20)
  --watchers N          watcher processes (default 2)
  --workers N           worker processes (default 3)
  --redis MODE          standalone (default), cluster (3 primaries with a replica each) or
                        sentinel (a primary and a replica); redis-restart needs standalone,
                        redis-failover cluster or sentinel
  --converge-within D   the bound after the faults stop (default 120s)
  -h, --help            this text`;

function integer(value: string, flag: string, min: number, max: number): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < min || n > max) {
    throw new Error(`--${flag} must be an integer from ${min} to ${max}, got "${value}"`);
  }
  return n;
}

function duration(value: string, flag: string): number {
  const ms = parseDuration(value);
  if (ms === undefined || ms <= 0)
    throw new Error(`--${flag} must be a duration such as 90s or 2m, got "${value}"`);
  return ms;
}

/** Parses the command line; throws an Error naming the flag on a bad value. */
export function parseSoakArgs(argv: readonly string[], randomSeed: () => number): SoakOptions {
  const { values } = parseArgs({
    args: [...argv],
    options: {
      duration: { type: 'string', default: '60s' },
      seed: { type: 'string' },
      faults: { type: 'string', default: 'all' },
      backupjobs: { type: 'string', default: '20' },
      watchers: { type: 'string', default: '2' },
      workers: { type: 'string', default: '3' },
      redis: { type: 'string', default: 'standalone' },
      'converge-within': { type: 'string', default: '120s' },
      help: { type: 'boolean', short: 'h', default: false },
    },
    strict: true,
  });
  return {
    durationMs: duration(values.duration, 'duration'),
    seed: values.seed === undefined ? randomSeed() : integer(values.seed, 'seed', 0, 2 ** 32 - 1),
    faults: values.faults
      .split(',')
      .map((f) => f.trim())
      .filter(Boolean),
    backupJobs: integer(values.backupjobs, 'backupjobs', 1, 1000),
    watchers: integer(values.watchers, 'watchers', 1, 5),
    workers: integer(values.workers, 'workers', 1, 16),
    redis: redisMode(values.redis),
    convergeWithinMs: duration(values['converge-within'], 'converge-within'),
    help: values.help,
  };
}

function redisMode(value: string): RedisMode {
  if (value === 'standalone' || value === 'cluster' || value === 'sentinel') return value;
  throw new Error(`--redis must be one of standalone, cluster, sentinel, got "${value}"`);
}
