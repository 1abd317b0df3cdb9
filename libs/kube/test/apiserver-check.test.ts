import { test } from 'node:test';
import assert from 'node:assert/strict';
import { apiServerCheck } from '../src/apiserver-check.js';
import { startKubeCluster } from '#testing/kube-cluster';

test('the API server check passes while the server answers and fails once it is gone', async () => {
  const cluster = await startKubeCluster();
  const check = apiServerCheck(cluster.rest);
  try {
    const details = await check.check(AbortSignal.timeout(2000));
    assert.equal(details.server, cluster.emu.url);
  } finally {
    await cluster.stop();
  }
  await assert.rejects(() => Promise.resolve(check.check(AbortSignal.timeout(2000))));
});
