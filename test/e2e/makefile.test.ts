import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { API_VERSION, KIND } from '#api';
import { start, type Emulator } from '#apiserver-emulator';
import { eventually, runCommand } from '#testing';
import { isReady } from '#tools/dev/sandbox';

// The Kubebuilder habits, run as a user types them, against the emulator as the current cluster:
// make help, make install / uninstall, make run, make deploy IMG=... / undeploy.

const CRD_NAME = 'backupjobs.ops.example.com';
const SAMPLE = 'config/samples/ops_v1alpha1_backupjob.yaml';
// Where make deploy installs the release by default.
const NAMESPACE = 'backup-operator-system';

let emulator: Emulator;
let dir: string;
let env: Record<string, string>;

before(async () => {
  dir = mkdtempSync(join(tmpdir(), 'makefile-'));
  // RBAC enforced, so that the access reviews below answer as a cluster would.
  emulator = await start({
    port: 0,
    rbac: true,
    kubeconfigPath: join(dir, 'kubeconfig'),
    namespaces: ['ops'],
  });
  // A private HOME keeps Helm's caches out of the user's; REDIS_URL unset: make run starts its own.
  env = { KUBECONFIG: join(dir, 'kubeconfig'), HOME: dir, REDIS_URL: '' };
});

after(async () => {
  await emulator?.stop();
  rmSync(dir, { recursive: true, force: true });
});

const make = (...args: string[]) => runCommand('make', args, { env, timeoutMs: 120_000 });

function crdInstalled(): boolean {
  return emulator.objects
    .list('apiextensions.k8s.io/v1', 'CustomResourceDefinition')
    .some((crd) => crd.metadata.name === CRD_NAME);
}

function listening(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    socket.once('connect', () => resolve(socket.destroy() !== undefined));
    socket.once('error', () => resolve(false));
  });
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

test('make help lists every target with what it does', async () => {
  const run = await make('help');
  assert.equal(run.code, 0, run.stderr);
  const targets = [...readFileSync('Makefile', 'utf8').matchAll(/^([a-z-]+):.*## (.+)$/gm)];
  const names = targets.map((t) => t[1]);
  for (const expected of [
    'install',
    'uninstall',
    'run',
    'docker-build',
    'docker-push',
    'deploy',
    'undeploy',
    'dev',
    'test',
    'lint',
    'bench',
  ])
    assert.ok(names.includes(expected), `the Makefile has a documented ${expected} target`);
  for (const [, name, text] of targets)
    assert.match(run.stdout, new RegExp(`^  ${name} +${text!.replace(/[.()]/g, '\\$&')}$`, 'm'));
});

test('make install puts the CRD into the current cluster and make uninstall takes it out', async () => {
  assert.equal(crdInstalled(), false);
  const installed = await make('install');
  assert.equal(installed.code, 0, installed.stderr);
  assert.match(installed.stdout, /customresourcedefinition.* created/);
  assert.equal(crdInstalled(), true);
  const removed = await make('uninstall');
  assert.equal(removed.code, 0, removed.stderr);
  assert.equal(crdInstalled(), false);
  // Installed again for the tests below, as a user would before make run.
  assert.equal((await make('install')).code, 0);
});

test('make run names the context, reconciles from source with a private Redis, DASHBOARD=1 prints the dashboard, and Ctrl-C stops it all', async () => {
  // Its own process group, as in a terminal: Ctrl-C reaches make and everything under it.
  const child = spawn('make', ['run', 'WORKERS=2', 'DASHBOARD=1'], {
    env: { ...process.env, ...env },
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout.on('data', (d: Buffer) => (output += d.toString()));
  child.stderr.on('data', (d: Buffer) => (output += d.toString()));
  const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
  try {
    const context = await eventually(
      'the context line',
      () => /^kubeconfig context "(.+)" \((.+)\) from (.+)$/m.exec(output) ?? undefined,
    );
    assert.equal(context[1], 'emulator');
    assert.equal(context[2], emulator.url);
    assert.equal(context[3], env.KUBECONFIG);
    const redis = await eventually(
      'the redis line',
      () =>
        /^redis: redis:\/\/127\.0\.0\.1:(\d+)\S* \(private .*redis-server\)$/m.exec(output) ??
        undefined,
    );
    const pids = await eventually('three processes', () => {
      const found = [...output.matchAll(/^(watcher|worker-\d): pid (\d+),/gm)];
      return found.length === 3 && found.map((m) => Number(m[2]));
    });
    const dashboard = await eventually(
      'the dashboard line',
      () =>
        /^queue dashboard \(read-only Bull Board\): (http:\/\/127\.0\.0\.1:\d+\/)$/m.exec(
          output,
        )?.[1],
    );
    const queues = await eventually('the dashboard to answer', async () => {
      const res = await fetch(`${dashboard}api/queues`).catch(() => undefined);
      return res?.ok && ((await res.json()) as { queues: unknown[] }).queues;
    });
    assert.equal(queues.length, 16, 'every shard of the default 16');
    const applied = await runCommand('kubectl', ['apply', '-f', SAMPLE], { env });
    assert.equal(applied.code, 0, applied.stderr);
    await eventually(
      'the sample BackupJob Ready',
      () => isReady(emulator.objects.get(API_VERSION, KIND, 'mysql-daily', 'ops')),
      60_000,
    );
    process.kill(-child.pid!, 'SIGINT');
    await exited;
    for (const pid of pids) assert.equal(alive(pid), false, `process ${pid} is gone`);
    assert.equal(await listening(Number(redis[1])), false, 'the private Redis is stopped');
    assert.match(output, /^stopped: watcher, workers, redis$/m);
  } catch (e) {
    throw new Error(`${String(e)}\nmake run printed:\n${output}`, { cause: e });
  } finally {
    if (child.exitCode === null && child.signalCode === null) process.kill(-child.pid!, 'SIGKILL');
  }
});

test('make deploy IMG=... installs the Helm release with that image; make undeploy removes it', async () => {
  const img = 'registry.example.com/team/backupjob-operator:1.2.3';
  const deployed = await make('deploy', `IMG=${img}`);
  assert.equal(deployed.code, 0, deployed.stderr);
  const deployments = () => emulator.objects.list('apps/v1', 'Deployment', NAMESPACE);
  const images = Object.fromEntries(
    deployments().map((d) => {
      const spec = d.spec as { template: { spec: { containers: { image: string }[] } } };
      return [d.metadata.name, spec.template.spec.containers[0]!.image];
    }),
  );
  assert.equal(images['backup-operator-watcher'], img);
  assert.equal(images['backup-operator-worker'], img);
  // The bundled Redis's generated password survives an upgrade (the running Redis keeps it).
  const password = () => {
    const secret = emulator.objects.get('v1', 'Secret', 'backup-operator-redis', NAMESPACE);
    return (secret?.data as Record<string, string> | undefined)?.password;
  };
  const first = password();
  assert.ok(first, 'the Redis Secret holds a password');
  const upgraded = await make('deploy', `IMG=${img}`);
  assert.equal(upgraded.code, 0, upgraded.stderr);
  assert.equal(password(), first);
  // docs/operations.md's access checks for each ServiceAccount, answered as their comments say.
  const doc = readFileSync('docs/operations.md', 'utf8');
  const block = /<!-- can-i -->\s*```sh\n([\s\S]*?)```/.exec(doc)![1]!;
  const checks = block.split('\n').filter(Boolean);
  assert.ok(checks.length >= 2);
  for (const line of checks) {
    const [, command, expected] = /^kubectl (.+?)\s+# (yes|no)$/.exec(line)!;
    const answer = await runCommand('kubectl', command!.split(/\s+/), { env });
    assert.equal(answer.stdout.trim(), expected, line);
  }
  const removed = await make('undeploy');
  assert.equal(removed.code, 0, removed.stderr);
  assert.deepEqual(deployments(), []);
});
