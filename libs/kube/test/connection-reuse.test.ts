import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { CoreV1Api, KubeConfig } from '@kubernetes/client-node';
import { loadKubeConfig } from '../src/client.js';
import { RestClient } from '../src/rest.js';
import { writeKubeconfigFor } from './kubeconfig.js';

// A server that counts TCP connections and answers like an API server's /version and namespace GET.
let server: Server;
let connections = 0;
let dir: string;
let kubeconfigPath: string;

before(async () => {
  server = createServer((req, res) => {
    res.setHeader('content-type', 'application/json');
    const body = req.url?.startsWith('/version')
      ? { major: '1', minor: '32', gitVersion: 'v1.32.0' }
      : { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'default' } };
    res.end(JSON.stringify(body));
  });
  server.keepAliveTimeout = 30_000;
  server.on('connection', () => connections++);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  dir = mkdtempSync(join(tmpdir(), 'connection-reuse-'));
  kubeconfigPath = writeKubeconfigFor(server, dir);
});

after(async () => {
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
  rmSync(dir, { recursive: true, force: true });
});

async function connectionsFor(kc: KubeConfig): Promise<number> {
  const before = connections;
  const rest = new RestClient(kc);
  const core = kc.makeApiClient(CoreV1Api);
  for (let i = 0; i < 10; i++) {
    await rest.request({ path: '/version' });
    await core.readNamespace({ name: 'default' });
  }
  return connections - before;
}

describe('connections to the API server', () => {
  test('client-node on its own opens a connection per request (what reuse fixes)', async () => {
    const plain = new KubeConfig();
    plain.loadFromFile(kubeconfigPath);
    assert.equal(await connectionsFor(plain), 20);
  });

  test('a loaded KubeConfig reuses its connections across requests and clients', async () => {
    assert.ok((await connectionsFor(loadKubeConfig(kubeconfigPath))) <= 2);
  });
});
