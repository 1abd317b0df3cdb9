import { execFileSync } from 'node:child_process';
import { availableParallelism, cpus, release, totalmem } from 'node:os';

export interface Machine {
  readonly cores: number;
  readonly cpuModel: string;
  readonly memoryGiB: number;
  readonly node: string;
  readonly kernel: string;
  readonly redis: string;
  readonly commit: string;
  /** True when the tree had uncommitted changes, so the commit alone does not reproduce the run. */
  readonly dirty: boolean;
}

function run(cmd: string, args: string[]): string {
  try {
    return execFileSync(cmd, args, { stdio: ['ignore', 'pipe', 'ignore'] })
      .toString()
      .trim();
  } catch {
    return 'unknown';
  }
}

export function describeMachine(): Machine {
  const status = run('git', ['status', '--porcelain', '--untracked-files=no']);
  return {
    cores: availableParallelism(),
    cpuModel: cpus()[0]?.model.trim() ?? 'unknown',
    memoryGiB: Math.round((totalmem() / 2 ** 30) * 10) / 10,
    node: process.version,
    kernel: release(),
    redis: /v=(\S+)/.exec(run('redis-server', ['--version']))?.[1] ?? 'unknown',
    commit: run('git', ['rev-parse', '--short=12', 'HEAD']),
    dirty: status !== '' && status !== 'unknown',
  };
}
