import assert from 'node:assert/strict';
import { test } from 'node:test';
import { healthReport } from '../src/health-endpoint.js';

test('a report: every check under details, the failing ones under error with their reason', async () => {
  let aborted = false;
  const report = await healthReport([
    { name: 'redis', check: () => undefined },
    { name: 'watcher', check: () => ({ role: 'standby' }) },
    {
      name: 'apiserver',
      check: () => {
        throw new Error('connect ECONNREFUSED');
      },
    },
    {
      name: 'slow',
      timeoutMs: 20,
      check: (signal) =>
        new Promise((resolve) => {
          signal.addEventListener('abort', () => {
            aborted = true;
            resolve();
          });
        }),
    },
  ]);
  assert.equal(report.status, 'error');
  assert.deepEqual(Object.keys(report.details), ['redis', 'watcher', 'apiserver', 'slow']);
  assert.deepEqual(Object.keys(report.info), ['redis', 'watcher']);
  assert.equal(report.details.watcher!.role, 'standby');
  assert.equal(report.details.watcher!.status, 'up');
  assert.equal(report.error.apiserver!.message, 'connect ECONNREFUSED');
  assert.equal(report.error.slow!.message, 'timeout of 20ms exceeded');
  assert.equal(report.error.slow!.status, 'down');
  assert.ok(aborted, 'a check past its timeout is told to stop');
  assert.equal((await healthReport([])).status, 'ok');
});
