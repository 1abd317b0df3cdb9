import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { Emulator } from '../../src/index.js';
import { kubectl, withEmulator } from '../support.js';

/** The real Helm 3 scripts/install-helm.sh puts in the tree. */
const HELM = resolve(process.env.HELM ?? '.tools/helm/bin/helm');
const CHART = 'helm/backupjob-operator';
const RELEASE = 'conf';
/** The chart names its objects after the release: <release>-worker. */
const WORKER = `${RELEASE}-worker`;

/**
 * Conformance with the real helm 3 and the project's chart: the release lifecycle a user runs,
 * with --wait (Deployments available, Services with a cluster IP) against the emulator.
 */
describe('helm conformance', () => {
  let emu: Emulator;
  let helm: ReturnType<typeof kubectl>;
  let k: ReturnType<typeof kubectl>;

  before(async () => {
    assert.ok(existsSync(HELM), `helm not found at ${HELM}: run scripts/install-helm.sh first`);
    emu = await withEmulator({ namespaces: ['operator'] });
    // The kubectl runner binds any client to the emulator (KUBECONFIG, HOME, cache).
    helm = kubectl(emu, HELM);
    k = kubectl(emu);
  });
  after(async () => {
    helm.cleanup();
    k.cleanup();
    await emu.stop();
  });

  const run = async (tool: typeof helm, ...args: string[]) => {
    const r = await tool([...args, '-n', 'operator']);
    assert.equal(r.code, 0, `${args.join(' ')}: ${r.stderr}`);
    return r.stdout;
  };
  const revision = async () =>
    JSON.parse(await run(helm, 'status', RELEASE, '-o', 'json')) as {
      version: number;
      info: { status: string };
    };

  test('install --wait, upgrade, rollback, uninstall, install again under the same name', async () => {
    await run(helm, 'install', RELEASE, CHART, '--wait', '--timeout', '30s');
    assert.deepEqual(await revision().then((r) => [r.version, r.info.status]), [1, 'deployed']);
    await run(
      helm,
      'upgrade',
      RELEASE,
      CHART,
      '--set',
      'worker.replicas=3',
      '--wait',
      '--timeout',
      '30s',
    );
    assert.equal((await revision()).version, 2);
    assert.equal(await run(k, 'get', 'deploy', WORKER, '-o', 'jsonpath={.spec.replicas}'), '3');
    await run(helm, 'rollback', RELEASE, '1', '--wait', '--timeout', '30s');
    assert.equal((await revision()).version, 3);
    await run(helm, 'uninstall', RELEASE, '--wait', '--timeout', '30s');
    const left = await helm(['status', RELEASE, '-n', 'operator']);
    assert.notEqual(left.code, 0, 'the release is gone');
    await run(helm, 'install', RELEASE, CHART, '--wait', '--timeout', '30s');
    assert.deepEqual(await revision().then((r) => [r.version, r.info.status]), [1, 'deployed']);
  });

  test('kubectl scale of the worker Deployment changes the replicas and the rollout completes', async () => {
    const worker = `deploy/${WORKER}`;
    await run(k, 'scale', worker, '--replicas=4');
    assert.match(
      await run(k, 'rollout', 'status', worker, '--timeout=20s'),
      /successfully rolled out/,
    );
    assert.equal(await run(k, 'get', worker, '-o', 'jsonpath={.status.availableReplicas}'), '4');
  });
});
