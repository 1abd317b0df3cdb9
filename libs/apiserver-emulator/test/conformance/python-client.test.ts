import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { after, before, describe, test } from 'node:test';
import type { Emulator } from '../../src/index.js';
import { kubectl, withEmulator } from '../support.js';

/** Debian's python3 with python3-kubernetes (apt), which .ci/run installs. */
const PYTHON = '/usr/bin/python3';
const SCRIPT = 'libs/apiserver-emulator/test/conformance/python_client.py';
const NS = 'py';

/**
 * Conformance with a client the project did not write: the Python client's watch (resuming from a
 * resourceVersion, ended by timeout_seconds, 410 after compaction), limit/continue paging and
 * server-side apply with force, through python_client.py.
 */
describe('python3-kubernetes conformance', () => {
  let emu: Emulator;
  let kubeconfig: string;
  let k: ReturnType<typeof kubectl>;

  before(async () => {
    emu = await withEmulator({ namespaces: [NS] });
    k = kubectl(emu);
    kubeconfig = k.kubeconfig;
  });
  after(async () => {
    k.cleanup();
    await emu.stop();
  });

  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  const step = (name: string, ...args: string[]): Promise<any> =>
    new Promise((resolve, reject) => {
      execFile(
        PYTHON,
        [SCRIPT, kubeconfig, NS, name, ...args],
        { timeout: 30000 },
        (err, stdout, stderr) => {
          if (err)
            reject(
              new Error(`${name}: ${stderr || err.message} (apt-get install python3-kubernetes)`),
            );
          else resolve(JSON.parse(stdout));
        },
      );
    });

  const configMap = (name: string) =>
    emu.objects.create({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace: NS } });

  test('list with limit and continue pages through every object', async () => {
    for (const name of ['a', 'b', 'c', 'd', 'e']) await configMap(`page-${name}`);
    const r = await step('page');
    assert.deepEqual(r.names, ['page-a', 'page-b', 'page-c', 'page-d', 'page-e']);
    assert.equal(r.pages, 3);
  });

  test('watch from a resourceVersion sees later changes and ends after timeout_seconds', async () => {
    const { resourceVersion } = await step('list-rv');
    await configMap('watched');
    const r = await step('watch', resourceVersion);
    assert.deepEqual(r.events, [['ADDED', 'watched']]);
    assert.equal(r.status, undefined);
  });

  test('watch from a compacted resourceVersion fails with 410', async () => {
    const { resourceVersion } = await step('list-rv');
    await configMap('after-compaction');
    emu.compact();
    const r = await step('watch', String(Number(resourceVersion) - 1));
    assert.equal(r.status, 410);
  });

  test('server-side apply conflicts with another manager, and force takes the field', async () => {
    await emu.objects.create({
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'applied', namespace: NS },
      data: { owner: 'someone else' },
    });
    const r = await step('apply');
    assert.equal(r.conflict, 409);
    assert.equal(r.owner, 'python');
    assert.ok(r.managers.includes('python-client'));
  });
});
