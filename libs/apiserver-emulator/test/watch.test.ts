import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Emulator } from '../src/index.js';
import { http, watchEvents, withEmulator } from './support.js';

const CM = '/api/v1/namespaces/w/configmaps';

describe('watch (api-concepts #efficient-detection-of-changes, #semantics-for-watch)', () => {
  let emu: Emulator;
  let call: ReturnType<typeof http>;

  before(async () => {
    emu = await withEmulator({ namespaces: ['w'], bookmarkIntervalMs: 50, watchCacheSize: 50 });
    call = http(emu);
  });
  after(() => emu.stop());

  test('resourceVersion unset starts with ADDED for every existing object', async () => {
    await call('POST', CM, { metadata: { name: 'existing-1' } });
    await call('POST', CM, { metadata: { name: 'existing-2' } });
    const events = await watchEvents(`${emu.url}${CM}?watch=true`, (ev) => ev.length >= 2);
    assert.deepEqual(events.map((e) => `${e.type} ${e.object.metadata.name}`).sort(), [
      'ADDED existing-1',
      'ADDED existing-2',
    ]);
  });

  test('a specific resourceVersion replays only later changes, and response headers arrive before any event', async () => {
    const list = await call('GET', CM);
    const rv = list.json.metadata.resourceVersion;
    const ctrl = new AbortController();
    const res = await fetch(`${emu.url}${CM}?watch=true&resourceVersion=${rv}`, {
      signal: ctrl.signal,
    });
    assert.equal(res.status, 200, 'headers are flushed while no event exists yet');
    ctrl.abort();
    await call('POST', CM, { metadata: { name: 'later' } });
    await call('DELETE', `${CM}/later`);
    const events = await watchEvents(
      `${emu.url}${CM}?watch=true&resourceVersion=${rv}`,
      (ev) => ev.length >= 2,
    );
    assert.deepEqual(
      events.map((e) => `${e.type} ${e.object.metadata.name}`),
      ['ADDED later', 'DELETED later'],
    );
  });

  test('a resourceVersion older than the history gets an in-stream ERROR 410 Expired', async () => {
    const rv = (await call('GET', CM)).json.metadata.resourceVersion;
    await call('POST', CM, { metadata: { name: 'compacted' } });
    emu.core.store.compact(emu.core.store.resourceVersion);
    const events = await watchEvents(
      `${emu.url}${CM}?watch=true&resourceVersion=${rv}`,
      (ev) => ev.length >= 1,
    );
    assert.equal(events[0]!.type, 'ERROR');
    assert.equal(events[0]!.object.code, 410);
    assert.equal(events[0]!.object.reason, 'Expired');
  });

  // api-concepts #watch-bookmarks
  test('allowWatchBookmarks sends BOOKMARK events carrying the current resourceVersion', async () => {
    const rv = (await call('GET', CM)).json.metadata.resourceVersion;
    const events = await watchEvents(
      `${emu.url}${CM}?watch=true&allowWatchBookmarks=true&resourceVersion=${rv}`,
      (ev) => ev.some((e) => e.type === 'BOOKMARK'),
    );
    const bookmark = events.find((e) => e.type === 'BOOKMARK')!;
    assert.ok(Number(bookmark.object.metadata.resourceVersion) >= Number(rv));
  });

  // api-concepts #streaming-lists (sendInitialEvents)
  test('sendInitialEvents ends the initial ADDED events with an annotated bookmark', async () => {
    const events = await watchEvents(
      `${emu.url}${CM}?watch=true&sendInitialEvents=true&allowWatchBookmarks=true&resourceVersionMatch=NotOlderThan`,
      (ev) => ev.some((e) => e.type === 'BOOKMARK'),
    );
    const last = events[events.length - 1]!;
    assert.equal(last.object.metadata.annotations?.['k8s.io/initial-events-end'], 'true');
    assert.ok(events.filter((e) => e.type === 'ADDED').length >= 2);
  });

  test('selector watches see objects that stop matching as DELETED and start matching as ADDED', async () => {
    const created = await call('POST', CM, { metadata: { name: 'moving', labels: { app: 'a' } } });
    const rv = created.json.metadata.resourceVersion;
    await call(
      'PATCH',
      `${CM}/moving`,
      { metadata: { labels: { app: 'b' } } },
      { 'Content-Type': 'application/merge-patch+json' },
    );
    await call(
      'PATCH',
      `${CM}/moving`,
      { metadata: { labels: { app: 'a' } } },
      { 'Content-Type': 'application/merge-patch+json' },
    );
    const events = await watchEvents(
      `${emu.url}${CM}?watch=true&labelSelector=app%3Da&resourceVersion=${rv}`,
      (ev) => ev.length >= 2,
    );
    assert.deepEqual(
      events.map((e) => e.type),
      ['DELETED', 'ADDED'],
    );
  });

  test('timeoutSeconds ends the stream', async () => {
    const rv = (await call('GET', CM)).json.metadata.resourceVersion;
    const res = await fetch(`${emu.url}${CM}?watch=true&timeoutSeconds=1&resourceVersion=${rv}`, {
      signal: AbortSignal.timeout(20000),
    });
    assert.equal(await res.text(), '', 'the server closed the stream (an abort would throw)');
  });

  // meta.k8s.io/v1 Table with TABLE-ACCEPT on watch (kubectl get -w)
  test('watch with Table accept sends one-row Tables', async () => {
    const rv = (await call('GET', CM)).json.metadata.resourceVersion;
    const accept = { Accept: 'application/json;as=Table;v=v1;g=meta.k8s.io,application/json' };
    const pending = watchEvents(
      `${emu.url}${CM}?watch=true&resourceVersion=${rv}`,
      (ev) => ev.length >= 1,
      5000,
      accept,
    );
    await new Promise((r) => setTimeout(r, 50));
    await call('POST', CM, { metadata: { name: 'tabled' }, data: { a: '1' } });
    const [ev] = await pending;
    const table = ev!.object as unknown as { kind: string; rows: { cells: unknown[] }[] };
    assert.equal(table.kind, 'Table');
    assert.deepEqual(table.rows[0]!.cells.slice(0, 2), ['tabled', 1]);
  });
});
