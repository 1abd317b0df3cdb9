import { existsSync, mkdirSync, readFileSync, rmdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/**
 * A memory cgroup with a limit, as a container runtime makes one for a pod's container: a
 * process started inside it sees the limit (Node sizes its heap from it, as in a pod), and the
 * kernel kills it when it uses more. Both cgroup versions: v1's memory controller, or v2's
 * unified hierarchy where the memory controller is enabled for the children of this process's
 * cgroup.
 */
export class MemoryCgroup {
  private constructor(
    readonly dir: string,
    private readonly version: 1 | 2,
    readonly limitBytes: number,
  ) {}

  /** Creates `name` beside this process's own memory cgroup's children, limited to `limitBytes`. */
  static create(name: string, limitBytes: number): MemoryCgroup {
    const { dir, version } = memoryCgroupRoot(readFileSync('/proc/self/cgroup', 'utf8'));
    const path = join(dir, name);
    // A leftover of an interrupted run would carry its kill count over.
    if (existsSync(path)) rmdirSync(path);
    try {
      mkdirSync(path);
      writeFileSync(
        join(path, version === 1 ? 'memory.limit_in_bytes' : 'memory.max'),
        String(limitBytes),
      );
    } catch (err) {
      throw new Error(
        `cannot make a memory cgroup with a limit at ${path} (cgroup v${version}): this needs write access there and, on v2, the memory controller in the parent's cgroup.subtree_control`,
        { cause: err },
      );
    }
    const cgroup = new MemoryCgroup(path, version, limitBytes);
    // v1 lets the peak be reset; a v2 cgroup is new, or its peak is that of its last process.
    if (version === 1) cgroup.write('memory.max_usage_in_bytes', '0');
    return cgroup;
  }

  /** The file a process writes its own pid to, to move itself in before it starts Node. */
  get procsFile(): string {
    return join(this.dir, 'cgroup.procs');
  }

  /** Most memory charged to it at once (anonymous memory and page cache), in bytes. */
  peakBytes(): number {
    return Number(this.read(this.version === 1 ? 'memory.max_usage_in_bytes' : 'memory.peak'));
  }

  /** Processes the kernel killed for going over the limit, since the cgroup was made. */
  oomKills(): number {
    const file = this.version === 1 ? 'memory.oom_control' : 'memory.events';
    return Number(/^oom_kill (\d+)/m.exec(this.read(file))?.[1] ?? 0);
  }

  /** Removes it; it must hold no process by then. */
  remove(): void {
    try {
      rmdirSync(this.dir);
    } catch {
      // A process still exiting keeps it a moment; an empty leftover is harmless.
    }
  }

  private read(file: string): string {
    return readFileSync(join(this.dir, file), 'utf8');
  }

  private write(file: string, value: string): void {
    writeFileSync(join(this.dir, file), value);
  }
}

/**
 * Where this process's memory cgroup lives, from /proc/self/cgroup: v1's `<n>:memory:<path>`
 * line, or else v2's `0::<path>`.
 */
export function memoryCgroupRoot(procSelfCgroup: string): { dir: string; version: 1 | 2 } {
  const lines = procSelfCgroup.trim().split('\n');
  const v1 = lines
    .map((l) => /^\d+:([^:]*):(.*)$/.exec(l))
    .find((m) => m?.[1]?.split(',').includes('memory'));
  if (v1) return { dir: join('/sys/fs/cgroup/memory', v1[2] ?? '/'), version: 1 };
  const v2 = lines.map((l) => /^0::(.*)$/.exec(l)).find(Boolean);
  if (v2) return { dir: join('/sys/fs/cgroup', v2[1] ?? '/'), version: 2 };
  throw new Error('no memory cgroup in /proc/self/cgroup: this needs cgroup v1 or v2');
}
