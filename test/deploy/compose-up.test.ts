import assert from 'node:assert/strict';
import { existsSync, rmSync } from 'node:fs';
import { after, test } from 'node:test';
import { eventually, freePort, runCommand } from '#testing';

// docker-compose.yml with docker-compose.emulator.yml, brought up and down with podman-compose the
// way its header tells a newcomer with no cluster, then used with the real kubectl.

const PROJECT = `backupjob-compose-test-${process.pid}`;
const FILES = ['-f', 'docker-compose.yml', '-f', 'docker-compose.emulator.yml'];
const KUBECONFIG = 'config/compose/kubeconfig';
const SAMPLE = 'config/samples/ops_v1alpha1_backupjob.yaml';

const env: Record<string, string> = {
  // The header's advice when your uid is not 1000; here it also lets the emulator write
  // config/compose/kubeconfig into a checkout owned by this user.
  OPERATOR_UID: String(process.getuid!()),
  OPERATOR_GID: String(process.getgid!()),
  // podman 4.3 does not know Docker's host-gateway; with no cluster on the host any address does.
  HOST_GATEWAY: '127.0.0.1',
};

const compose = (...args: string[]) =>
  runCommand(
    'podman-compose',
    // --format docker keeps the image's HEALTHCHECK; host networking for the build's npm ci.
    ['-p', PROJECT, '--podman-build-args', '--format docker --network=host', ...FILES, ...args],
    { env, timeoutMs: 900_000 },
  );
const podman = (...args: string[]) => runCommand('podman', args);
const kubectl = (...args: string[]) => runCommand('kubectl', ['--kubeconfig', KUBECONFIG, ...args]);

function check(run: { code: number; stdout: string; stderr: string }, what: string): string {
  assert.equal(run.code, 0, `${what} failed:\n${run.stdout}\n${run.stderr}`);
  return run.stdout;
}

async function projectContainers(): Promise<string[]> {
  const out = check(
    await podman(
      'ps',
      '-a',
      '--format',
      '{{.Names}}',
      '--filter',
      `label=io.podman.compose.project=${PROJECT}`,
    ),
    'podman ps',
  );
  return out.split('\n').filter(Boolean);
}

async function projectNetworks(): Promise<string[]> {
  const out = check(await podman('network', 'ls', '--format', '{{.Name}}'), 'network ls');
  return out.split('\n').filter((n) => n.startsWith(`${PROJECT}_`));
}

after(async () => {
  if ((await projectContainers()).length > 0) await compose('down');
  for (const network of await projectNetworks()) await podman('network', 'rm', '--force', network);
});

test('no cluster: compose up runs the emulator and the operator, a BackupJob gets Ready, down removes it all', async () => {
  env.EMULATOR_PORT = String(await freePort());
  env.WATCHER_METRICS_PORT = String(await freePort());
  rmSync(KUBECONFIG, { force: true });
  check(await compose('build'), 'podman-compose build');
  // up -d answers 0 even when a container fails to start: what follows checks each one.
  check(await compose('up', '-d'), 'podman-compose up');
  const containers = await projectContainers();
  assert.deepEqual(containers.map((c) => c.replace(`${PROJECT}_`, '')).sort(), [
    'apiserver_1',
    'redis_1',
    'watcher_1',
    'worker_1',
  ]);
  const logs = async () => {
    const all = await Promise.all(
      containers.map(async (c) => `--- ${c}\n${(await podman('logs', c)).stdout}`),
    );
    return all.join('\n');
  };
  try {
    await eventually('the kubeconfig the emulator writes', () => existsSync(KUBECONFIG), 60_000);
    assert.match(
      check(await kubectl('config', 'view'), 'config view'),
      new RegExp(`server: http://127.0.0.1:${env.EMULATOR_PORT}`),
    );
    check(await kubectl('get', 'crd', 'backupjobs.ops.example.com'), 'the CRD is installed');
    check(await kubectl('apply', '-f', SAMPLE), 'kubectl apply');
    await eventually(
      'the sample BackupJob Ready=True',
      async () =>
        (
          await kubectl(
            'get',
            'bj',
            'mysql-daily',
            '-n',
            'ops',
            '-o',
            'jsonpath={.status.conditions[?(@.type=="Ready")].status}',
          )
        ).stdout === 'True',
      90_000,
      500,
    );
    check(await kubectl('get', 'cronjob', 'mysql-daily-backup', '-n', 'ops'), 'the CronJob exists');
    // Every service's healthcheck, as Docker's timer would run it.
    for (const name of containers)
      await eventually(
        `${name} healthy`,
        async () => (await podman('healthcheck', 'run', name)).code === 0,
        60_000,
      );
    // The watcher's /metrics on the published host port.
    const metrics = await fetch(`http://127.0.0.1:${env.WATCHER_METRICS_PORT}/metrics`);
    assert.match(await metrics.text(), /^workqueue_adds_total/m);
  } catch (e) {
    throw new Error(`${String(e)}\n${await logs()}`, { cause: e });
  }
  check(await compose('down'), 'podman-compose down');
  assert.deepEqual(await projectContainers(), [], 'down removes every container');
  // podman-compose 1.0.x leaves the project's network behind (Docker Compose removes it): the
  // only thing left, and nothing is attached to it.
  for (const network of await projectNetworks())
    check(await podman('network', 'rm', network), `network rm ${network}`);
  assert.deepEqual(await projectNetworks(), []);
});
