import assert from 'node:assert/strict';
import { connect } from 'node:net';
import { after, before, describe, test } from 'node:test';
import type { Emulator } from '../src/index.js';
import { http, watchEvents, withEmulator } from './support.js';
import { eventually } from '#testing';

const CM = '/api/v1/namespaces/f/configmaps';

describe('fault injection', () => {
  let emu: Emulator;
  let call: ReturnType<typeof http>;
  before(async () => {
    emu = await withEmulator({ namespaces: ['f'] });
    call = http(emu);
  });
  after(() => emu.stop());

  test('errors for the next N matching requests, then normal answers', async () => {
    emu.faults.addError({ match: { verb: 'list', resource: 'configmaps' }, code: 503, count: 2 });
    assert.equal((await call('GET', CM)).status, 503);
    assert.equal(
      (await call('GET', '/api/v1/namespaces/f/secrets')).status,
      200,
      'other resources unaffected',
    );
    const second = await call('GET', CM);
    assert.equal(second.status, 503);
    assert.equal(second.json.reason, 'ServiceUnavailable');
    assert.equal((await call('GET', CM)).status, 200);
  });

  test('429 carries Retry-After and a rate of 1 hits every request until removed', async () => {
    const id = emu.faults.addError({
      match: { verb: 'create' },
      code: 429,
      rate: 1,
      retryAfterSeconds: 3,
    });
    for (let i = 0; i < 3; i++) {
      const r = await call('POST', CM, { metadata: { name: 'x' } });
      assert.equal(r.status, 429);
      assert.equal(r.headers.get('retry-after'), '3');
      assert.equal(r.json.details.retryAfterSeconds, 3);
    }
    emu.faults.remove(id);
    assert.equal((await call('POST', CM, { metadata: { name: 'x' } })).status, 201);
    assert.equal(emu.log.count({ verb: 'create', resource: 'configmaps', code: 429 }), 3);
  });

  test('latency delays only the matching verb', async () => {
    emu.faults.addLatency({
      match: { verb: 'get', resource: 'configmaps' },
      fixedMs: 400,
      jitterMs: 50,
    });
    const order: string[] = [];
    const slow = call('GET', `${CM}/x`).then(() => order.push('slow get'));
    const fast = call('GET', CM).then(() => order.push('fast list'));
    await Promise.all([slow, fast]);
    emu.faults.clear();
    assert.deepEqual(order, ['fast list', 'slow get']);
  });

  test('watches can be expired (410), dropped and stalled', async () => {
    const rv = (await call('GET', CM)).json.metadata.resourceVersion;
    const url = `${emu.url}${CM}?watch=true&resourceVersion=${rv}`;
    const expiring = watchEvents(url, (ev) => ev.length >= 1);
    await eventually('watch open', () => emu.watches.count({ resource: 'configmaps' }) === 1);
    assert.equal(emu.watches.expire({ resource: 'configmaps' }), 1);
    const [err] = await expiring;
    assert.equal(err!.type, 'ERROR');
    assert.equal(err!.object.code, 410);

    const dropped = fetch(url).then((r) => r.text());
    await eventually('watch open', () => emu.watches.count({ resource: 'configmaps' }) === 1);
    emu.watches.drop({ resource: 'configmaps' });
    await assert.rejects(dropped, 'a dropped connection is an error, not a clean end');

    const stalled = watchEvents(url, () => false, 60000);
    await eventually('watch open', () => emu.watches.count({ resource: 'configmaps' }) === 1);
    emu.watches.stall({ resource: 'configmaps' });
    await call('POST', CM, { metadata: { name: 'unseen' } });
    const fresh = await watchEvents(url, (ev) => ev.length >= 1);
    assert.equal(fresh[0]!.object.metadata.name, 'unseen', 'a new watch sees the change');
    emu.watches.close({ resource: 'configmaps' });
    assert.deepEqual(await stalled, [], 'the stalled watch stayed silent');
  });

  // apiserver cacher: blocked watchers are terminated rather than buffered without bound
  test('a watch whose client stops reading is cut off', async () => {
    const small = await withEmulator({ namespaces: ['f'], watchBufferLimitBytes: 64 * 1024 });
    try {
      const socket = connect(small.port, '127.0.0.1');
      socket.write(`GET ${CM}?watch=true HTTP/1.1\r\nHost: x\r\n\r\n`);
      socket.pause();
      await eventually('watch open', () => small.watches.count() === 1);
      const payload = 'x'.repeat(32 * 1024);
      for (let i = 0; i < 2000 && small.watches.count() > 0; i++) {
        small.objects.create({
          apiVersion: 'v1',
          kind: 'ConfigMap',
          metadata: { name: `big-${i}`, namespace: 'f' },
          data: { payload },
        });
        await new Promise((r) => setImmediate(r));
      }
      assert.equal(small.watches.count(), 0, 'the stalled reader was disconnected');
      socket.destroy();
    } finally {
      await small.stop();
    }
  });

  test('a 410 error fault on watch answers the next watch with an in-stream ERROR', async () => {
    emu.faults.addError({ match: { verb: 'watch', resource: 'configmaps' }, code: 410, count: 1 });
    const [first] = await watchEvents(`${emu.url}${CM}?watch=true`, (ev) => ev.length >= 1);
    assert.equal(first!.type, 'ERROR');
    assert.equal(first!.object.code, 410);
  });

  test('restart keeps the data and the port', async () => {
    await call('POST', CM, { metadata: { name: 'survivor' } });
    const url = emu.url;
    await emu.restart();
    assert.equal(emu.url, url);
    // Pooled keep-alive connections died with the old listener; a client retries.
    await eventually(
      'object served after restart',
      async () => (await call('GET', `${CM}/survivor`)).status === 200,
    );
  });

  test('the request log counts per verb, resource and user', async () => {
    const mark = emu.log.mark();
    await call('GET', CM, undefined, { 'Impersonate-User': 'alice' });
    await call('GET', CM, undefined, { 'Impersonate-User': 'alice' });
    assert.equal(
      emu.log.count({ verb: 'list', resource: 'configmaps', user: 'alice', since: mark }),
      2,
    );
    assert.equal(emu.log.count({ verb: 'list', resource: 'configmaps', user: 'alice' }), 2);
    assert.ok(emu.log.summary()['list configmaps alice'] === 2);
  });

  test('the request log records the precondition each update, patch and delete carried', async () => {
    const mark = emu.log.mark();
    const made = await call('POST', CM, { metadata: { name: 'guarded' }, data: { a: '1' } });
    const rv = made.json.metadata.resourceVersion as string;
    const merge = { 'Content-Type': 'application/merge-patch+json' };
    await call(
      'PATCH',
      `${CM}/guarded`,
      { metadata: { resourceVersion: rv }, data: { a: '2' } },
      merge,
    );
    await call('PATCH', `${CM}/guarded`, { data: { a: '3' } }, merge);
    const current = (await call('GET', `${CM}/guarded`)).json.metadata.resourceVersion as string;
    await call(
      'PATCH',
      `${CM}/guarded`,
      [
        { op: 'test', path: '/metadata/resourceVersion', value: current },
        { op: 'replace', path: '/data/a', value: '4' },
      ],
      { 'Content-Type': 'application/json-patch+json' },
    );
    await call('DELETE', `${CM}/guarded`, { preconditions: { uid: made.json.metadata.uid } });
    const writes = emu.log
      .entries({ resource: 'configmaps', name: 'guarded', since: mark })
      .filter((r) => r.verb !== 'get')
      .map((r) => `${r.verb} ${r.precondition ?? '-'}`);
    assert.deepEqual(writes, [
      'patch resourceVersion',
      'patch none',
      'patch resourceVersion',
      'delete uid',
    ]);
  });
});
