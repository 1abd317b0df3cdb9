import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { API_VERSION, KIND } from '#api';
import {
  eventually,
  freePort,
  OPERATOR_NAMESPACE,
  runCommand,
  startOperatorSystem,
  type OperatorSystem,
} from '#testing';
import { isReady } from '#tools/dev/sandbox';

// The image as the cluster runs it: built from the Dockerfile by `make docker-build` (podman here,
// scripts/install-podman.sh), then the watcher and a worker started from it with the chart's pod
// hardening against the emulator (RBAC enforced, ServiceAccount tokens) and a real Redis.

const IMG = 'localhost/backupjob-operator:image-test';
const SAMPLE = 'config/samples/ops_v1alpha1_backupjob.yaml';
// The chart's shutdownGracePeriod and terminationGracePeriodSeconds (5s above it).
const SHUTDOWN_GRACE_PERIOD = '25s';
const TERMINATION_GRACE_SECONDS = 30;

const containers: string[] = [];
let sys: OperatorSystem;

const podman = (...args: string[]) => runCommand('podman', args, { timeoutMs: 600_000 });

function check(run: { code: number; stdout: string; stderr: string }, what: string): string {
  assert.equal(run.code, 0, `${what} failed:\n${run.stdout}\n${run.stderr}`);
  return run.stdout;
}

before(async () => {
  assert.equal(
    (await runCommand('podman', ['--version']).catch(() => ({ code: -1 }))).code,
    0,
    'podman is missing: scripts/install-podman.sh installs it and the local base images',
  );
  sys = await startOperatorSystem({
    watchers: 0,
    workers: 0,
    rbac: true,
    emulator: { namespaces: ['ops'] },
  });
});

after(async () => {
  if (containers.length > 0) await podman('rm', '--force', '--time', '0', ...containers);
  await sys?.stop();
});

/** Starts one process of the image the way the chart's Deployment does; returns the container. */
async function run(component: 'watcher' | 'worker'): Promise<string> {
  const kubeconfig = join(sys.kubeconfigPath, `../${component}-image.kubeconfig`);
  writeFileSync(
    kubeconfig,
    sys.emulator.kubeconfigForServiceAccount(OPERATOR_NAMESPACE, `backupjob-operator-${component}`),
  );
  const name = `backupjob-image-test-${component}-${process.pid}`;
  containers.push(name);
  const env = {
    KUBECONFIG: '/kube/config',
    REDIS_URL: sys.redisUrl,
    METRICS_PORT: String(await freePort()),
    HEALTH_PORT: String(await freePort()),
    POD_NAME: name,
    POD_NAMESPACE: OPERATOR_NAMESPACE,
    SHUTDOWN_GRACE_PERIOD,
  };
  check(
    await podman(
      'run',
      '--detach',
      '--name',
      name,
      // Host networking: the emulator and Redis listen on this machine's loopback.
      '--network=host',
      '--read-only',
      '--tmpfs',
      '/tmp',
      '--cap-drop',
      'ALL',
      '--security-opt',
      'no-new-privileges',
      '--user',
      '1000:1000',
      '--volume',
      `${kubeconfig}:/kube/config:ro`,
      ...Object.entries(env).flatMap(([k, v]) => ['--env', `${k}=${v}`]),
      IMG,
      // The watcher gets the chart's command; the worker is the image's default.
      ...(component === 'watcher'
        ? ['node', '--max-semi-space-size=16', 'dist/apps/watcher/src/main.js']
        : []),
    ),
    `podman run ${component}`,
  );
  return name;
}

test('make docker-build builds the Dockerfile, keeping its HEALTHCHECK and non-root user', async () => {
  check(
    await runCommand(
      'make',
      [
        'docker-build',
        'CONTAINER_TOOL=podman',
        'CONTAINER_BUILD_FLAGS=--format docker --network=host',
        `IMG=${IMG}`,
      ],
      { timeoutMs: 900_000 },
    ),
    'make docker-build',
  );
  const inspect = async (field: string) =>
    check(await podman('image', 'inspect', '--format', `{{json .${field}}}`, IMG), 'inspect');
  assert.equal(JSON.parse(await inspect('User')), '1000:1000');
  const healthcheck = JSON.parse(await inspect('HealthCheck')) as { Test?: string[] } | null;
  assert.ok(healthcheck?.Test?.join(' ').includes('/healthz'), 'the HEALTHCHECK is kept');
});

test('each bundle in the image loads with the code cache its build made, under any uid', async () => {
  // The build stage and the runtime must run the same Node, or V8 refuses the cache and every
  // start compiles; the cache is a plain file, so a uid other than the image's reads it too.
  const loads = [
    `import { loadBundle } from '/app/dist/libs/runtime/src/bundle-loader.js';`,
    `for (const app of ['watcher', 'worker'])`,
    `  console.log(app, loadBundle(\`/app/dist/apps/\${app}/bundle/app.cjs\`).codeCacheUsed);`,
    'process.exit(0);',
  ].join('\n');
  for (const user of ['1000:1000', '4242:4242']) {
    const out = check(
      await podman(
        'run',
        '--rm',
        '--read-only',
        '--user',
        user,
        IMG,
        'node',
        '--input-type=module',
        '-e',
        loads,
      ),
      `podman run --user ${user}`,
    );
    assert.deepEqual(out.trim().split('\n'), ['watcher true', 'worker true'], user);
  }
});

test('each code cache in the image holds more than loading its bundle compiles: the build trained it on a start', async () => {
  // A cache taken after loading alone, made for a copy of the bundle, is the yardstick.
  const sizes = [
    `import { cpSync, statSync } from 'node:fs';`,
    `import { codeCacheOf, writeCodeCache } from '/app/dist/libs/runtime/src/bundle-loader.js';`,
    `for (const app of ['watcher', 'worker']) {`,
    `  const bundle = \`/app/dist/apps/\${app}/bundle/app.cjs\`;`,
    // With the Lua scripts that loading reads from beside the bundle.
    `  cpSync(\`/app/dist/apps/\${app}/bundle\`, \`/tmp/\${app}\`, { recursive: true });`,
    `  const copy = \`/tmp/\${app}/app.cjs\`;`,
    '  writeCodeCache(copy);',
    '  console.log(app, statSync(codeCacheOf(bundle)).size, statSync(codeCacheOf(copy)).size);',
    '}',
    'process.exit(0);',
  ].join('\n');
  const out = check(
    await podman(
      'run',
      '--rm',
      '--read-only',
      '--tmpfs',
      '/tmp',
      IMG,
      'node',
      '--input-type=module',
      '-e',
      sizes,
    ),
    'podman run (cache sizes)',
  );
  const lines = out.trim().split('\n');
  assert.equal(lines.length, 2, out);
  for (const line of lines) {
    const [app, trained, loaded] = line.split(' ');
    assert.ok(
      Number(trained) > Number(loaded) * 1.1,
      `${app}: ${trained} bytes against ${loaded} after loading`,
    );
  }
});

test('the watcher and a worker from the image, hardened as in the chart, make a BackupJob Ready', async () => {
  const watcher = await run('watcher');
  const worker = await run('worker');
  const logs = async () =>
    (await podman('logs', watcher)).stdout + (await podman('logs', worker)).stdout;
  try {
    const applied = await sys.kubectl(['apply', '-f', SAMPLE]);
    assert.equal(applied.code, 0, applied.stderr);
    await eventually(
      'the sample BackupJob Ready',
      () => isReady(sys.emulator.objects.get(API_VERSION, KIND, 'mysql-daily', 'ops')),
      60_000,
    );
    // The image's HEALTHCHECK, run as Docker would run it (there is no systemd timer here).
    for (const name of [watcher, worker])
      await eventually(
        `${name} healthcheck`,
        async () => (await podman('healthcheck', 'run', name)).code === 0,
      );
    // The root filesystem is read-only and the process is not root.
    assert.notEqual((await podman('exec', worker, 'touch', '/app/probe')).code, 0);
    assert.equal(check(await podman('exec', worker, 'id', '-u'), 'id').trim(), '1000');
  } catch (e) {
    throw new Error(`${String(e)}\ncontainer logs:\n${await logs()}`, { cause: e });
  }
  // SIGTERM, then SIGKILL after the pod's grace period: exit code 0 means it left in time by itself.
  for (const name of [watcher, worker]) {
    check(await podman('stop', '--time', String(TERMINATION_GRACE_SECONDS), name), `stop ${name}`);
    const code = check(await podman('inspect', '--format', '{{.State.ExitCode}}', name), 'inspect');
    assert.equal(code.trim(), '0', `${name} exited 0 on SIGTERM`);
  }
});
