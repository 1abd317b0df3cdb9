import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Logger, createOperatorMetrics, createRegistry } from '#observability';
import { dropInvalidKeys, isObjectKey } from '../src/key-guard.js';

test('isObjectKey: a namespace and a name as the API server allows them', () => {
  for (const key of ['ops/mysql-daily', 'a/b.c', `ns/${'n'.repeat(253)}`]) {
    assert.equal(isObjectKey(key), true, key);
  }
  for (const key of [
    'no-slash',
    'a/b/c',
    '/x',
    'x/',
    'UPPER/x',
    'ops/a b',
    'ops/x\n',
    `${'n'.repeat(64)}/x`,
    `ns/${'n'.repeat(254)}`,
    '../etc/passwd',
  ]) {
    assert.equal(isObjectKey(key), false, JSON.stringify(key));
  }
});

test('dropInvalidKeys: a bad key is logged, counted and done; a good one is reconciled', async () => {
  const lines: Record<string, unknown>[] = [];
  const log = new Logger({
    sink: (line) => lines.push(JSON.parse(line) as Record<string, unknown>),
  });
  const metrics = createOperatorMetrics(createRegistry({ defaultMetrics: false }));
  const recorder = metrics.controller.forController('backupjob', 1);
  const reconciled: string[] = [];
  const handler = dropInvalidKeys(
    async (key) => {
      reconciled.push(key);
      return { requeueAfter: 5 };
    },
    log,
    recorder,
  );
  assert.equal(await handler('x'.repeat(5000)), undefined);
  assert.deepEqual(await handler('ops/app'), { requeueAfter: 5 });
  assert.deepEqual(reconciled, ['ops/app']);
  assert.equal(lines.length, 1);
  assert.equal(lines[0]?.msg, 'dropped a queue key that is not namespace/name');
  assert.equal(lines[0]?.keyLength, 5000);
  assert.equal((lines[0]?.key as string).length, 200);
  const text = await metrics.registry.metrics();
  assert.match(text, /^backupjob_operator_invalid_keys_total\{controller="backupjob"\} 1$/m);
});
