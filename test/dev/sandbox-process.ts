import { spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startProcess, type ManagedProcess } from '#testing';

/** The built entry point of `npm run dev` (what the npm script runs after the build). */
export const DEV_ENTRY = fileURLToPath(new URL('../../tools/dev/main.js', import.meta.url));

export interface ShellResult {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs a command line with bash, asynchronously (never blocking this process's event loop). */
function bash(
  script: string,
  env: Record<string, string | undefined> = {},
  timeoutMs = 120_000,
): Promise<ShellResult> {
  return new Promise((resolve, reject) => {
    const child = spawn('bash', ['-e', '-o', 'pipefail', '-c', script], {
      env: { ...process.env, ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code: code ?? -1, stdout, stderr });
    });
  });
}

/** Every process below `pid`, found through /proc by parent. */
export function descendants(pid: number): number[] {
  const parentOf = new Map<number, number>();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      // The command name is in parentheses and may hold spaces; the parent pid follows the state.
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      parentOf.set(Number(entry), ppid);
    } catch {
      // exited while listing
    }
  }
  const out: number[] = [];
  const walk = (parent: number) => {
    for (const [child, ppid] of parentOf)
      if (ppid === parent) {
        out.push(child);
        walk(child);
      }
  };
  walk(pid);
  return out;
}

/** True while a process with this pid exists and is not a zombie. */
export function alive(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2)[0] !== 'Z';
  } catch {
    return false;
  }
}

/** Whether something accepts TCP connections on the loopback port. */
export function listening(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ port, host: '127.0.0.1' });
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}

export interface RunningSandbox {
  readonly process: ManagedProcess;
  /** What the sandbox printed up to and including its ready line. */
  readonly output: string[];
  /** The path from the printed `export KUBECONFIG=...`. */
  readonly kubeconfig: string;
  /** Every loopback port the printed URLs name (API server, Redis, metrics, health). */
  readonly ports: number[];
  /** The printed command lines that start with `kubectl`, in order. */
  readonly commands: string[];
  /** Runs a command line with the printed KUBECONFIG. */
  run(command: string): Promise<ShellResult>;
  /** Sends SIGINT (Ctrl-C) and resolves with the exit code. */
  interrupt(): Promise<number | null>;
  /** Stops it if still running and removes its state directory. */
  cleanup(): Promise<void>;
}

export const READY_LINE = /^sandbox ready: /;

/**
 * Starts `npm run dev`'s entry as a user would (a child process of this one, from the repository
 * root), with a private state directory and its own redis-server, and waits for the ready line.
 */
export async function startSandboxProcess(args: string[] = []): Promise<RunningSandbox> {
  const dir = mkdtempSync(join(tmpdir(), 'sandbox-'));
  const proc = startProcess({
    name: 'sandbox',
    command: process.execPath,
    args: [DEV_ENTRY, '--dir', dir, ...args],
    // A REDIS_URL from the environment would point at a shared Redis; the sandbox starts its own.
    env: { REDIS_URL: undefined, KUBECONFIG: undefined },
  });
  try {
    await proc.waitForLine(READY_LINE, 180_000);
  } catch (e) {
    await proc.stop('SIGKILL');
    throw new Error(`${String(e)}\n${proc.lines.join('\n')}`, { cause: e });
  }
  const output = [...proc.lines];
  const exported = output.map((l) => /^\s*export KUBECONFIG=(\S+)$/.exec(l)?.[1]).find(Boolean);
  if (!exported) throw new Error(`no "export KUBECONFIG=" line in:\n${output.join('\n')}`);
  const ports = [
    ...new Set(
      output.flatMap((l) =>
        // URLs, and the further nodes of a redis+cluster:// or redis+sentinel:// list.
        [...l.matchAll(/(?:(?:https?|redis(?:\+\w+)?):\/\/|,)127\.0\.0\.1:(\d+)/g)].map((m) =>
          Number(m[1]),
        ),
      ),
    ),
  ];
  const commands = output.map((l) => l.trim()).filter((l) => l.startsWith('kubectl '));
  const run = (command: string) =>
    bash(command, { KUBECONFIG: exported, KUBECACHEDIR: join(dir, 'kube-cache') });
  return {
    process: proc,
    output,
    kubeconfig: exported,
    ports,
    commands,
    run,
    interrupt: () => proc.stop('SIGINT', 60_000),
    async cleanup() {
      await proc.stop('SIGINT', 60_000);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
