import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { parseRunArgs } from '#tools/run/args';
import { currentCluster } from '#tools/run/cluster';

test('make run takes 1 to 16 workers, --dashboard, and names the flag of a bad value', () => {
  assert.deepEqual(parseRunArgs([]), { workers: 1, dashboard: false, help: false });
  assert.equal(parseRunArgs(['--dashboard']).dashboard, true);
  assert.equal(parseRunArgs(['--workers', '4']).workers, 4);
  assert.throws(
    () => parseRunArgs(['--workers', '0']),
    /--workers must be an integer from 1 to 16, got "0"/,
  );
  assert.throws(() => parseRunArgs(['--nope']), /Unknown option '--nope'/);
});

test('make run refuses to start without a kubeconfig or a current context, naming what is missing', () => {
  const dir = mkdtempSync(join(tmpdir(), 'run-cluster-'));
  const saved = process.env.KUBECONFIG;
  try {
    process.env.KUBECONFIG = join(dir, 'absent');
    assert.throws(() => currentCluster(), /no kubeconfig at .*absent: set KUBECONFIG/);
    const file = join(dir, 'config');
    writeFileSync(file, 'apiVersion: v1\nkind: Config\nclusters: []\ncontexts: []\nusers: []\n');
    process.env.KUBECONFIG = file;
    assert.throws(() => currentCluster(), /has no current context: kubectl config use-context/);
  } finally {
    if (saved === undefined) delete process.env.KUBECONFIG;
    else process.env.KUBECONFIG = saved;
    rmSync(dir, { recursive: true, force: true });
  }
});
