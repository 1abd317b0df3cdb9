import { spawn, type ChildProcess } from 'node:child_process';
import { appendFileSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';

export interface ManagedProcess {
  readonly name: string;
  readonly child: ChildProcess;
  /** Every line the process wrote, stdout and stderr interleaved, in arrival order. */
  readonly lines: string[];
  /** Resolves with the first line (already seen or future) that matches, or rejects after timeoutMs. */
  waitForLine(match: RegExp | ((line: string) => boolean), timeoutMs?: number): Promise<string>;
  /** Sends the signal and resolves with the exit code (null when killed by a signal). */
  stop(signal?: NodeJS.Signals, timeoutMs?: number): Promise<number | null>;
  readonly exited: Promise<number | null>;
  readonly running: boolean;
}

export interface StartOptions {
  name: string;
  command: string;
  args: string[];
  env?: Record<string, string | undefined>;
  cwd?: string;
  /** Copy each line to this process's stderr, prefixed with the name, for debugging a failing run. */
  echo?: boolean;
}

/** Runs a child process whose output a test can wait on line by line. */
export function startProcess(options: StartOptions): ManagedProcess {
  const child = spawn(options.command, options.args, {
    cwd: options.cwd,
    env: { ...process.env, ...options.env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const lines: string[] = [];
  const waiters = new Set<(line: string) => void>();
  const logFile = processLogFile(options.name, child.pid);
  const onLine = (line: string) => {
    lines.push(line);
    if (logFile) appendFileSync(logFile, `${line}\n`);
    if (options.echo || process.env.ECHO_PROCESS_OUTPUT)
      process.stderr.write(`[${options.name}] ${line}\n`);
    for (const waiter of [...waiters]) waiter(line);
  };
  createInterface({ input: child.stdout! }).on('line', onLine);
  createInterface({ input: child.stderr! }).on('line', onLine);
  let running = true;
  const exited = new Promise<number | null>((resolve) => {
    child.once('exit', (code) => {
      running = false;
      resolve(code);
    });
  });
  // 'exit' can come before the last lines are read from the pipes ('close' comes after), but a
  // grandchild holding the pipes open would delay 'close' forever: wait for it, briefly.
  const closed = new Promise<void>((resolve) => child.once('close', () => resolve()));
  const outputRead = () =>
    exited.then(() => Promise.race([closed, new Promise((r) => setTimeout(r, 2_000).unref())]));

  return {
    name: options.name,
    child,
    lines,
    exited,
    get running() {
      return running;
    },
    waitForLine(match, timeoutMs = 30_000) {
      const test = typeof match === 'function' ? match : (line: string) => match.test(line);
      const seen = lines.find(test);
      if (seen !== undefined) return Promise.resolve(seen);
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => {
          waiters.delete(waiter);
          reject(
            new Error(`${options.name}: no line matching ${String(match)} within ${timeoutMs} ms`),
          );
        }, timeoutMs);
        const waiter = (line: string) => {
          if (!test(line)) return;
          clearTimeout(timer);
          waiters.delete(waiter);
          resolve(line);
        };
        waiters.add(waiter);
        void outputRead().then(() => {
          if (!waiters.has(waiter)) return;
          clearTimeout(timer);
          waiters.delete(waiter);
          // The process's own last words say why it exited; without them the failure is a riddle.
          const tail = lines.slice(-5).join('\n');
          reject(
            new Error(
              `${options.name} exited (code ${child.exitCode}, signal ${child.signalCode}) before a line matching ${String(match)}; its last lines:\n${tail}`,
            ),
          );
        });
      });
    },
    async stop(signal = 'SIGTERM', timeoutMs = 15_000) {
      if (!running) return exited;
      child.kill(signal);
      const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
      const code = await exited;
      clearTimeout(timer);
      return code;
    },
  };
}

/**
 * With PROCESS_LOG_DIR set, every line of every child also goes to `<dir>/<name>-<pid>.log`, so a
 * failure met in a long loop of runs can be read afterwards, whole.
 */
function processLogFile(name: string, pid: number | undefined): string | undefined {
  const dir = process.env.PROCESS_LOG_DIR;
  if (!dir) return undefined;
  mkdirSync(dir, { recursive: true });
  return join(dir, `${name}-${pid ?? 'unstarted'}.log`);
}
