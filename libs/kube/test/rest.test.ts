import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type ServerResponse, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { loadKubeConfig } from '../src/client.js';
import { RestClient } from '../src/rest.js';
import { writeKubeconfigFor } from './kubeconfig.js';

// An API server that answers /fast at once and holds /slow until the test ends.
let server: Server;
let dir: string;
let rest: RestClient;
const held: ServerResponse[] = [];

before(async () => {
  server = createServer((req, res) => {
    res.setHeader('content-type', 'application/json');
    if (req.url?.startsWith('/slow')) held.push(res);
    else res.end(JSON.stringify({ kind: 'Status', status: 'Success' }));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  dir = mkdtempSync(join(tmpdir(), 'rest-'));
  const kubeconfigPath = writeKubeconfigFor(server, dir);
  rest = new RestClient(loadKubeConfig(kubeconfigPath));
});

after(async () => {
  for (const res of held) res.end('{}');
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
  rmSync(dir, { recursive: true, force: true });
});

describe('RestClient.request', () => {
  test('a request the server does not answer within its limit fails with a TimeoutError', async () => {
    await assert.rejects(rest.request({ path: '/slow', timeoutMs: 50 }), { name: 'TimeoutError' });
  });

  test("a request stops when the caller's signal aborts, with the caller's reason", async () => {
    const caller = new AbortController();
    const pending = rest.request({ path: '/slow', signal: caller.signal });
    caller.abort(new Error('shutting down'));
    await assert.rejects(pending, { message: 'shutting down' });
  });

  test('a request answered in time leaves no timer running for its limit', async () => {
    const timers = () => process.getActiveResourcesInfo().filter((r) => r === 'Timeout').length;
    await rest.request({ path: '/fast', timeoutMs: 60_000 });
    const before = timers();
    await rest.request({ path: '/fast', timeoutMs: 60_000 });
    assert.equal(timers(), before);
  });

  test('a request answered in time returns the parsed body', async () => {
    assert.deepEqual(await rest.request({ path: '/fast', timeoutMs: 10_000 }), {
      kind: 'Status',
      status: 'Success',
    });
  });
});
