import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { dirname } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { eventually, startProcess } from '#testing';
import {
  alive,
  DEV_ENTRY,
  descendants,
  listening,
  startSandboxProcess,
  type RunningSandbox,
} from './sandbox-process.js';

/** The value of `column` in the row of `name` of a kubectl table. */
function cell(table: string, name: string, column: string): string | undefined {
  const [header, ...rows] = table.trim().split('\n');
  const start = header!.indexOf(column);
  const next = header!.slice(start + column.length).search(/\S/);
  const end = next < 0 ? undefined : start + column.length + next;
  const row = rows.find((r) => r.split(/\s+/).includes(name));
  return row?.slice(start, end).trim();
}

const printed = (sandbox: RunningSandbox, prefix: string): string => {
  const command = sandbox.commands.find((c) => c.startsWith(prefix));
  assert.ok(
    command,
    `the sandbox prints "${prefix}…"; it printed:\n${sandbox.commands.join('\n')}`,
  );
  return command;
};

describe('npm run dev (the sandbox), used the way the README says', () => {
  let sandbox: RunningSandbox;
  before(async () => {
    sandbox = await startSandboxProcess(['--simulate-backups', '--clock-factor', '86400']);
  });
  after(() => sandbox?.cleanup());

  test('prints the kubeconfig, the tour commands and where every process serves metrics and health', async () => {
    assert.ok(existsSync(sandbox.kubeconfig), 'the exported kubeconfig exists');
    const text = sandbox.output.join('\n');
    for (const name of ['watcher-0', 'worker-0', 'worker-1']) {
      assert.match(
        text,
        new RegExp(
          `${name} +pid \\d+ +http://127\\.0\\.0\\.1:\\d+/metrics +http://127\\.0\\.0\\.1:\\d+/healthz`,
        ),
      );
    }
    assert.doesNotMatch(text, /worker-2/, 'two workers by default');
    const metricsUrl = /(http:\/\/127\.0\.0\.1:\d+\/metrics)/.exec(text)![1]!;
    const metrics = await (await fetch(metricsUrl)).text();
    assert.match(metrics, /^leader_election_master_status\{name="[^"]+"\} 1$/m, 'watcher-0 leads');
    assert.deepEqual(
      ['kubectl get bj -A', 'kubectl get cronjob -n ops', 'kubectl describe bj mysql-daily -n ops'],
      sandbox.commands.slice(0, 3),
    );
  });

  test('the printed kubectl commands show the BackupJob Ready, its CronJob, conditions and Events', async () => {
    const list = await sandbox.run(printed(sandbox, 'kubectl get bj -A'));
    assert.equal(list.code, 0, list.stderr);
    assert.equal(cell(list.stdout, 'mysql-daily', 'READY'), 'true', list.stdout);
    assert.equal(cell(list.stdout, 'mysql-daily', 'SCHEDULE'), '10 2 * * *');

    const cronJobs = await sandbox.run(printed(sandbox, 'kubectl get cronjob -n ops'));
    assert.equal(cronJobs.code, 0, cronJobs.stderr);
    assert.equal(
      cell(cronJobs.stdout, 'mysql-daily-backup', 'SCHEDULE'),
      '10 2 * * *',
      cronJobs.stdout,
    );

    const described = await sandbox.run(printed(sandbox, 'kubectl describe bj mysql-daily'));
    assert.equal(described.code, 0, described.stderr);
    assert.match(described.stdout, /Conditions:[\s\S]*Type:\s+Ready/);
    assert.match(described.stdout, /Events:[\s\S]*Normal\s+CronJobCreated/);
  });

  test('--simulate-backups: backups run and lastBackupTime moves forward', async () => {
    const last = async () =>
      (await sandbox.run('kubectl get bj mysql-daily -n ops -o jsonpath={.status.lastBackupTime}'))
        .stdout;
    const first = await eventually('a first lastBackupTime', async () => (await last()) || false);
    await eventually('a later lastBackupTime', async () => (await last()) > first, 60_000);
  });

  test('the live summary reports the leader, depth per shard and reconciles/s', async () => {
    const line = await sandbox.process.waitForLine(/^\[\d\d:\d\d:\d\d\] leader=/, 30_000);
    assert.match(line, /leader=watcher-0 depth=\[\d+,\d+,\d+,\d+\] .*reconciles\/s=/);
  });

  test('the printed patch changes the schedule and the CronJob follows', async () => {
    const patched = await sandbox.run(printed(sandbox, 'kubectl patch bj mysql-daily'));
    assert.equal(patched.code, 0, patched.stderr);
    await eventually(
      'the CronJob schedule to follow the BackupJob',
      async () => {
        const r = await sandbox.run(printed(sandbox, 'kubectl get cronjob -n ops'));
        return cell(r.stdout, 'mysql-daily-backup', 'SCHEDULE') === '*/5 * * * *';
      },
      60_000,
    );
  });

  test('the printed delete removes the BackupJob, and its CronJob goes with it', async () => {
    const deleted = await sandbox.run(printed(sandbox, 'kubectl delete bj mysql-daily'));
    assert.equal(deleted.code, 0, deleted.stderr);
    assert.match(deleted.stdout, /backupjob.ops.example.com "mysql-daily" deleted/);
    const list = await sandbox.run('kubectl get bj -A');
    assert.match(list.stderr, /No resources found/);
    await eventually('the CronJob to be collected', async () =>
      /No resources found/.test((await sandbox.run('kubectl get cronjob -n ops')).stderr),
    );
  });

  test('Ctrl-C stops everything: no child process and no port is left', async () => {
    const children = descendants(sandbox.process.child.pid!);
    assert.ok(children.length >= 4, `redis-server, a watcher and two workers run: ${children}`);
    for (const port of sandbox.ports)
      assert.ok(await listening(port), `port ${port} is open while running`);
    const code = await sandbox.interrupt();
    assert.equal(code, 0, sandbox.process.lines.slice(-20).join('\n'));
    assert.match(sandbox.process.lines.join('\n'), /sandbox stopped/);
    assert.deepEqual(children.filter(alive), [], 'every child process is gone');
    for (const port of sandbox.ports)
      assert.equal(await listening(port), false, `port ${port} is closed`);
  });
});

for (const mode of ['cluster', 'sentinel'] as const) {
  test(`npm run dev -- --redis ${mode}: the operator runs on a local ${mode === 'cluster' ? 'Redis Cluster' : 'Sentinel setup'}, and Ctrl-C stops all of it`, async () => {
    const sandbox = await startSandboxProcess(['--redis', mode]);
    try {
      const redisLine = sandbox.output.find((l) => l.trim().startsWith('Redis '));
      assert.match(redisLine ?? '', new RegExp(`redis\\+${mode}://127\\.0\\.0\\.1:\\d+`));
      const bj = (await sandbox.run('kubectl get bj -n ops')).stdout;
      assert.equal(cell(bj, 'mysql-daily', 'READY'), 'true', bj);
      const children = descendants(sandbox.process.child.pid!);
      // A watcher, two workers and Redis: 6 nodes for the Cluster; primary, replica, Sentinel.
      assert.ok(children.length >= (mode === 'cluster' ? 9 : 6), `children: ${children}`);
      assert.equal(await sandbox.interrupt(), 0, sandbox.process.lines.slice(-20).join('\n'));
      assert.deepEqual(children.filter(alive), [], 'every child process is gone');
      for (const port of sandbox.ports)
        assert.equal(await listening(port), false, `port ${port} is closed`);
    } finally {
      await sandbox.cleanup();
    }
  });
}

test('without REDIS_URL and without redis-server on PATH, the sandbox says how to get Redis and exits non-zero', async () => {
  const proc = startProcess({
    name: 'sandbox-no-redis',
    command: process.execPath,
    args: [DEV_ENTRY, '--dir', '/nonexistent-sandbox-dir'],
    env: { REDIS_URL: undefined, PATH: dirname(process.execPath) },
  });
  const code = await proc.exited;
  const text = proc.lines.join('\n');
  assert.notEqual(code, 0);
  assert.match(text, /no redis-server on PATH/);
  assert.match(text, /REDIS_URL=redis:\/\/127\.0\.0\.1:6379 npm run dev/);
  assert.doesNotMatch(text, /sandbox ready/);
});
