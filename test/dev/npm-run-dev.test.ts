import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { eventually } from '#testing';
import { alive, descendants, READY_LINE } from './sandbox-process.js';

// `npm run dev` stopped the way a supervisor or an IDE stops it: one signal to npm's own PID,
// not to the terminal's process group. Every process it started must be gone afterwards.

/** The command line of a process, from /proc. */
function commandOf(pid: number): string {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').replace(/\0/g, ' ').trim();
  } catch {
    return '';
  }
}

for (const signal of ['SIGTERM', 'SIGINT', 'SIGKILL'] as const) {
  test(`${signal} to the PID of npm run dev leaves no watcher, worker, redis-server or runner`, async () => {
    const dir = mkdtempSync(join(tmpdir(), 'npm-run-dev-'));
    const args = ['run', 'dev', '--', '--dir', join(dir, 'state'), '--workers', '2'];
    if (signal === 'SIGTERM') args.push('--dashboard');
    // Its own process group, so that a failure can clean up everything; the signal under test
    // goes to npm's PID alone.
    const npm = spawn('npm', args, {
      detached: true,
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { ...process.env, REDIS_URL: undefined, KUBECONFIG: undefined },
    });
    let output = '';
    npm.stdout.on('data', (d: Buffer) => (output += d.toString()));
    npm.stderr.on('data', (d: Buffer) => (output += d.toString()));
    const exited = new Promise<void>((resolve) => npm.once('exit', () => resolve()));
    let tree: number[] = [];
    try {
      await eventually(
        'the sandbox ready line',
        () => output.split('\n').some((l) => READY_LINE.test(l)),
        240_000,
      );
      tree = descendants(npm.pid!);
      const commands = tree.map(commandOf);
      const count = (pattern: RegExp) => commands.filter((c) => pattern.test(c)).length;
      assert.equal(count(/tools\/dev\/main\.js/), 1, commands.join('\n'));
      assert.equal(count(/apps\/watcher\/src\/main\.js/), 1, commands.join('\n'));
      assert.equal(count(/apps\/worker\/src\/main\.js/), 2, commands.join('\n'));
      assert.equal(count(/redis-server/), 1, commands.join('\n'));
      if (signal === 'SIGTERM') {
        const url = /queue dashboard \(read-only Bull Board\): (\S+)/.exec(output)?.[1];
        assert.ok(url, `the banner prints the dashboard URL:\n${output}`);
        const queues = (await (await fetch(`${url}api/queues`)).json()) as { queues: unknown[] };
        assert.equal(queues.queues.length, 4, 'the sandbox has four shards');
      }

      process.kill(npm.pid!, signal);
      await eventually(
        'npm to exit',
        () => npm.exitCode !== null || npm.signalCode !== null,
        60_000,
      );
      await exited;
      await eventually(
        'every process npm run dev started to be gone',
        () => tree.filter(alive).length === 0 || undefined,
        60_000,
      ).catch((e: unknown) => {
        const left = tree.filter(alive).map((pid) => `${pid} ${commandOf(pid)}`);
        throw new Error(`${String(e)}; still running:\n${left.join('\n')}\n${output}`, {
          cause: e,
        });
      });
      assert.match(output, /sandbox stopped; nothing left running/);
    } finally {
      try {
        process.kill(-npm.pid!, 'SIGKILL');
      } catch {
        // the group is already empty
      }
      for (const pid of tree.filter(alive)) process.kill(pid, 'SIGKILL');
      rmSync(dir, { recursive: true, force: true });
    }
  });
}
