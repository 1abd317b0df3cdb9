import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { CoreV1Api, KubeConfig, KubernetesObjectApi, Watch } from '@kubernetes/client-node';
import { createOperatorMetrics, createRegistry, instrumentKubeConfig } from '../src/index.js';
import { RestClient } from '#kube';
import { freePort } from '#testing';

/** A small HTTP server answering the few API paths the test calls, counting what it receives. */
function startApiServer(): Promise<{ server: Server; host: string; received: string[] }> {
  const received: string[] = [];
  const json = (status: number, body: unknown) => ({ status, body: JSON.stringify(body) });
  const routes: Record<string, () => { status: number; body: string }> = {
    '/api/v1/namespaces': () =>
      json(200, { kind: 'NamespaceList', apiVersion: 'v1', metadata: {}, items: [] }),
    '/api/v1/namespaces/missing': () =>
      json(404, {
        kind: 'Status',
        apiVersion: 'v1',
        status: 'Failure',
        reason: 'NotFound',
        code: 404,
      }),
    '/api/v1': () =>
      json(200, {
        kind: 'APIResourceList',
        groupVersion: 'v1',
        resources: [{ name: 'configmaps', namespaced: true, kind: 'ConfigMap', verbs: ['get'] }],
      }),
    '/api/v1/namespaces/default/configmaps/settings': () =>
      json(200, {
        kind: 'ConfigMap',
        apiVersion: 'v1',
        metadata: { name: 'settings', namespace: 'default' },
        data: { a: '1' },
      }),
  };
  const server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://x');
    received.push(`${req.method} ${url.pathname}`);
    if (url.pathname === '/api/v1/namespaces/default/configmaps' && url.searchParams.get('watch')) {
      res.writeHead(200, { 'content-type': 'application/json' });
      const object = { kind: 'ConfigMap', apiVersion: 'v1', metadata: { name: 'settings' } };
      res.end(`${JSON.stringify({ type: 'ADDED', object })}\n`);
      return;
    }
    const route = routes[url.pathname];
    const { status, body } = route ? route() : json(404, { kind: 'Status', code: 404 });
    res.writeHead(status, { 'content-type': 'application/json' }).end(body);
  });
  return new Promise((resolve) =>
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as AddressInfo;
      resolve({ server, host: `127.0.0.1:${port}`, received });
    }),
  );
}

function kubeConfig(server: string, skipTLSVerify: boolean): KubeConfig {
  const kc = new KubeConfig();
  kc.loadFromOptions({
    clusters: [{ name: 'test', server, skipTLSVerify }],
    users: [{ name: 'test', token: 'token' }],
    contexts: [{ name: 'test', cluster: 'test', user: 'test' }],
    currentContext: 'test',
  });
  return kc;
}

async function counters(metrics: ReturnType<typeof createOperatorMetrics>) {
  const values = (await metrics.restClient.requests.get()).values;
  return values.map((v) => ({ ...v.labels, value: v.value }));
}

describe('instrumentKubeConfig', () => {
  let api: Awaited<ReturnType<typeof startApiServer>>;
  before(async () => {
    api = await startApiServer();
  });
  after(() => new Promise<void>((resolve) => api.server.close(() => resolve())));

  test('counts generated API, KubernetesObjectApi and Watch requests with code, method and host', async () => {
    const metrics = createOperatorMetrics(createRegistry({ defaultMetrics: false }));
    const kc = instrumentKubeConfig(kubeConfig(`http://${api.host}`, true), metrics.restClient);
    const received = api.received.length;

    const core = kc.makeApiClient(CoreV1Api);
    assert.deepEqual((await core.listNamespace()).items, []);
    await assert.rejects(
      core.readNamespace({ name: 'missing' }),
      (err: { code?: number }) => err.code === 404,
    );

    const objects = KubernetesObjectApi.makeApiClient(kc);
    const cm = await objects.read({
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'settings', namespace: 'default' },
    });
    assert.equal(cm.metadata?.name, 'settings');

    const events: string[] = [];
    await new Promise<void>((resolve, reject) => {
      void new Watch(kc).watch(
        '/api/v1/namespaces/default/configmaps',
        {},
        (type) => events.push(type),
        (err) => (err ? reject(err as Error) : resolve()),
      );
    });
    assert.deepEqual(events, ['ADDED']);

    const served = api.received.slice(received);
    assert.deepEqual(served.toSorted(), [
      'GET /api/v1',
      'GET /api/v1/namespaces',
      'GET /api/v1/namespaces/default/configmaps',
      'GET /api/v1/namespaces/default/configmaps/settings',
      'GET /api/v1/namespaces/missing',
    ]);
    const counted = await counters(metrics);
    assert.deepEqual(
      counted.toSorted((a, b) => String(a.code).localeCompare(String(b.code))),
      [
        { code: '200', method: 'GET', host: api.host, value: 4 },
        { code: '404', method: 'GET', host: api.host, value: 1 },
      ],
    );
    const durations = (await metrics.restClient.requestDuration.get()).values.find(
      (v) => v.metricName === 'rest_client_request_duration_seconds_count',
    );
    assert.deepEqual(durations?.labels, { verb: 'GET', host: api.host });
    assert.equal(durations?.value, 5);
  });

  test('counts the operator’s RestClient: its requests (undici’s request) and its streams (fetch)', async () => {
    const metrics = createOperatorMetrics(createRegistry({ defaultMetrics: false }));
    const kc = instrumentKubeConfig(kubeConfig(`http://${api.host}`, true), metrics.restClient);
    const rest = new RestClient(kc);
    await rest.request({ path: '/api/v1/namespaces' });
    await assert.rejects(rest.request({ path: '/api/v1/namespaces/missing' }), /NotFound|404/);
    const stream = await rest.stream({
      path: '/api/v1/namespaces/default/configmaps',
      query: { watch: 1 },
    });
    assert.match(await new Response(stream).text(), /"ADDED"/);
    const counted = await counters(metrics);
    assert.deepEqual(
      counted.toSorted((a, b) => String(a.code).localeCompare(String(b.code))),
      [
        { code: '200', method: 'GET', host: api.host, value: 2 },
        { code: '404', method: 'GET', host: api.host, value: 1 },
      ],
    );
  });

  test('a request with no response counts as code <error> (through the global dispatcher)', async () => {
    const metrics = createOperatorMetrics(createRegistry({ defaultMetrics: false }));
    const port = await freePort();
    const kc = instrumentKubeConfig(
      kubeConfig(`https://127.0.0.1:${port}`, false),
      metrics.restClient,
    );
    await assert.rejects(kc.makeApiClient(CoreV1Api).listNamespace());
    assert.deepEqual(await counters(metrics), [
      { code: '<error>', method: 'GET', host: `127.0.0.1:${port}`, value: 1 },
    ]);
  });

  test('a KubeConfig that is not instrumented counts nothing', async () => {
    const metrics = createOperatorMetrics(createRegistry({ defaultMetrics: false }));
    instrumentKubeConfig(kubeConfig(`http://${api.host}`, true), metrics.restClient);
    await kubeConfig(`http://${api.host}`, true).makeApiClient(CoreV1Api).listNamespace();
    assert.deepEqual(await counters(metrics), []);
  });
});
