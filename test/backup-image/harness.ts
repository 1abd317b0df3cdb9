// Runs the reference backup image's script the way the operator's CronJob pod does: a clean
// environment holding only the contract's variables, a credentials dir laid out like a mounted
// Secret, and a destination directory.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { chmodSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import type { TestContext } from 'node:test';

const SCRIPT = resolve(process.cwd(), 'images/backup/backup.sh');

/** The uid and gid a run may take to act as the image's non-root user (nobody). */
export const UNPRIVILEGED = 65534;

export interface Workspace {
  readonly root: string;
  readonly destination: string;
  readonly credentials: string;
}

export interface RunResult {
  readonly status: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

export interface BackupOk {
  readonly file: string;
  readonly bytes: number;
  readonly pruned: number;
}

/** A temp folder removed when the test ends; readable by other uids, as a mounted volume is. */
export function workspace(t: TestContext): Workspace {
  const root = mkdtempSync(join(tmpdir(), 'backup-image-'));
  t.after(() => rmSync(root, { recursive: true, force: true }));
  chmodSync(root, 0o755);
  const credentials = join(root, 'credentials');
  mkdirSync(credentials, { mode: 0o755 });
  return { root, destination: join(root, 'backups', 'ops', 'mysql-daily'), credentials };
}

/** Writes Secret keys as files ending in a newline, as `kubectl create secret --from-file` of an echoed value gives. */
export function writeCredentials(dir: string, values: Record<string, string | number>): void {
  for (const [key, value] of Object.entries(values)) {
    writeFileSync(join(dir, key), `${value}\n`, { mode: 0o644 });
  }
}

export function runBackupScript(
  ws: Workspace,
  env: Record<string, string>,
  options: { asUid?: number } = {},
): RunResult {
  const command = options.asUid === undefined ? SCRIPT : 'setpriv';
  const args =
    options.asUid === undefined
      ? []
      : [`--reuid=${options.asUid}`, `--regid=${options.asUid}`, '--clear-groups', '--', SCRIPT];
  const result = spawnSync(command, args, {
    encoding: 'utf8',
    timeout: 60_000,
    env: {
      PATH: process.env.PATH ?? '/usr/bin:/bin',
      HOME: ws.root,
      BACKUP_NAME: 'mysql-daily',
      BACKUP_NAMESPACE: 'ops',
      BACKUP_CREDENTIALS_DIR: ws.credentials,
      BACKUP_DESTINATION: ws.destination,
      ...env,
    },
  });
  if (result.error) throw result.error;
  return { status: result.status, stdout: result.stdout, stderr: result.stderr };
}

function lastLine(text: string): string {
  return text.trimEnd().split('\n').at(-1) ?? '';
}

/** Asserts success and parses the final `backup ok:` line. */
export function backupOk(result: RunResult): BackupOk {
  assert.equal(result.status, 0, `the script failed: ${result.stderr}`);
  const match = /^backup ok: file=(\S+) bytes=(\d+) pruned=(\d+)$/.exec(lastLine(result.stdout));
  assert.ok(match, `no final 'backup ok:' line in stdout:\n${result.stdout}`);
  return { file: match[1] ?? '', bytes: Number(match[2]), pruned: Number(match[3]) };
}

/** Asserts a failure with the given exit code whose last stderr line is one clear reason. */
export function assertFailure(result: RunResult, exitCode: number, reason: RegExp): void {
  const line = lastLine(result.stderr);
  assert.equal(result.status, exitCode, `exit code; stderr: ${result.stderr}`);
  assert.match(line, /^backup failed: \S/);
  assert.match(line, reason);
  assert.doesNotMatch(result.stdout, /backup ok/);
}

/** The file names in a directory, sorted, hidden ones included; none when it does not exist. */
export function filesIn(dir: string): string[] {
  try {
    return readdirSync(dir).sort();
  } catch {
    return [];
  }
}

/** The contract's file name stamp: UTC, YYYYMMDDTHHMMSSZ. */
export function utcStamp(date: Date): string {
  return date
    .toISOString()
    .replace(/\.\d{3}Z$/, 'Z')
    .replaceAll('-', '')
    .replaceAll(':', '');
}

export function daysAgo(days: number, from = new Date()): Date {
  return new Date(from.getTime() - days * 86_400_000);
}
