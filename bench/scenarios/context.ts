import { execFileSync } from 'node:child_process';
import type { ScenarioOutput } from '../lib/result.js';
import type { Size } from '../sizes.js';
import { startBaseline, startOperator, type SystemUnderTest } from '../env/system.js';
import type { RedisMode } from '#testing';

export type SystemKind = 'operator' | 'baseline';

export interface BenchContext {
  readonly size: Size;
  /** Which systems run: the product, the baseline, or both (default). */
  readonly systems: ReadonlySet<SystemKind>;
  log(message: string): void;
  /** The baseline's fastest concurrency per latency, found by the cold start sweep. */
  readonly baselineBest: Map<number, number>;
  /**
   * Output folders of other builds of the operator (`OUT_DIR=<dir> npm run build` of another
   * commit), each `<label>=<dir>` or `<dir>`, whose start-up the start-up scenario measures
   * beside this one's.
   */
  readonly compareBuilds: readonly string[];
}

export interface Scenario {
  readonly name: string;
  readonly title: string;
  run(ctx: BenchContext): Promise<ScenarioOutput>;
}

export interface StartOptions {
  /** Write a V8 CPU profile of every process here. */
  readonly profileDir?: string;
  /** Open every process's inspector, for reading memory after a full GC. */
  readonly inspect?: boolean;
}

/** How to start one system under test against a given kubeconfig. */
export interface SystemSpec {
  readonly kind: SystemKind;
  readonly label: string;
  readonly workers?: number;
  readonly concurrency: number;
  start(kubeconfigPath: string, options?: StartOptions): Promise<SystemUnderTest>;
}

export interface OperatorVariant {
  /**
   * One redis-server (default), a 3-primary Redis Cluster without replicas, or a primary with
   * one replica behind a Sentinel (a Sentinel deployment without a replica protects nothing).
   */
  readonly redis?: RedisMode;
  /** Queue shards; default: the size's. */
  readonly shards?: number;
  /** More environment for the worker processes. */
  readonly workerEnv?: Record<string, string>;
  /** More environment for the watcher processes. */
  readonly watcherEnv?: Record<string, string>;
  /** Another build's output folder, and its label (see BenchContext.compareBuilds). */
  readonly build?: { readonly dir: string; readonly label: string };
}

/** A `--compare-build` value: `label=dir`, or `dir` alone, named after the commit it is in. */
export function compareBuild(spec: string): { dir: string; label: string } {
  const [label, dir] = spec.includes('=') ? (spec.split(/=(.*)/s) as [string, string]) : ['', spec];
  if (label) return { dir, label };
  try {
    const commit = execFileSync('git', ['rev-parse', '--short=7', 'HEAD'], {
      cwd: dir,
      encoding: 'utf8',
    });
    return { dir, label: `commit ${commit.trim()}` };
  } catch {
    return { dir, label: dir };
  }
}

const REDIS_LABELS: Record<RedisMode, string> = {
  standalone: '',
  cluster: ' (Redis Cluster)',
  sentinel: ' (Redis Sentinel)',
};

export function operatorSpec(
  ctx: BenchContext,
  workers: number,
  variant: OperatorVariant = {},
): SystemSpec {
  const { workerConcurrency: concurrency } = ctx.size;
  const shards = variant.shards ?? ctx.size.shards;
  const redis = variant.redis ?? 'standalone';
  return {
    kind: 'operator',
    label: `operator ${workers}w${REDIS_LABELS[redis]}${variant.build ? ` of ${variant.build.label}` : ''}`,
    workers,
    concurrency,
    start: (kubeconfigPath, options) =>
      startOperator({
        kubeconfigPath,
        workers,
        concurrency,
        shards,
        ...options,
        redis,
        workerEnv: variant.workerEnv,
        watcherEnv: variant.watcherEnv,
        build: variant.build?.dir,
      }),
  };
}

export function baselineSpec(
  concurrency: number,
  label = `baseline c=${concurrency}`,
  env?: Record<string, string>,
): SystemSpec {
  return {
    kind: 'baseline',
    label,
    concurrency,
    start: (kubeconfigPath, options) =>
      startBaseline({ kubeconfigPath, concurrency, env, ...options }),
  };
}

/** The baseline at its best concurrency for this latency (its largest candidate if unmeasured). */
export function bestBaseline(
  ctx: BenchContext,
  latencyMs: number,
  env?: Record<string, string>,
): SystemSpec {
  const c = ctx.baselineBest.get(latencyMs) ?? Math.max(...ctx.size.coldStart.baselineConcurrency);
  return baselineSpec(c, `baseline best (c=${c})`, env);
}

/** The systems a comparison runs: the operator's configurations, then the two baselines. */
export function systemsFor(ctx: BenchContext, latencyMs: number, workers: number[]): SystemSpec[] {
  const out: SystemSpec[] = [];
  if (ctx.systems.has('operator')) out.push(...workers.map((w) => operatorSpec(ctx, w)));
  if (ctx.systems.has('baseline')) out.push(bestBaseline(ctx, latencyMs), baselineSpec(1));
  return out;
}
