import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { Ajv } from 'ajv';
import { parse } from 'yaml';
import { findObject, renderChart } from './support/helm.js';

// The current Compose Specification schema, as dclint bundles it (no network needed).
const schemaPath = 'node_modules/dclint/schemas/compose.schema.json';
const { $schema: _draft, ...schema } = JSON.parse(readFileSync(schemaPath, 'utf8')) as Record<
  string,
  unknown
>;
const validateCompose = new Ajv({ strict: false, allErrors: true }).compile(schema);

const text = readFileSync('docker-compose.yml', 'utf8');
// Compose resolves YAML merge keys (<<: *anchor) before it validates, and so does this parse.
const compose = parse(text, { merge: true }) as {
  services: Record<string, Service>;
};
interface Service {
  command?: string[];
  container_name?: string;
  ports?: string[];
  volumes?: string[];
  healthcheck?: { test: string[] };
  environment?: Record<string, string>;
  deploy?: { replicas?: number };
  depends_on?: Record<string, { condition: string }>;
  read_only?: boolean;
  cap_drop?: string[];
}

function schemaErrors(document: unknown): string[] {
  return validateCompose(document)
    ? []
    : (validateCompose.errors ?? []).map((e) => `${e.instancePath} ${e.message}`);
}

describe('docker-compose.yml', () => {
  test('validates against the Compose Specification schema', () => {
    assert.deepEqual(schemaErrors(compose), []);
  });

  test('the schema check rejects unknown keys and bad values', () => {
    const bad = structuredClone(compose);
    (bad.services.worker!.healthcheck as Record<string, unknown>).intervall = '5s';
    bad.services.worker!.depends_on = { redis: { condition: 'service_ready' } };
    const errors = schemaErrors(bad);
    assert.ok(
      errors.some((e) =>
        e.includes('/services/worker/healthcheck must NOT have additional properties'),
      ),
      errors.join('\n'),
    );
    assert.ok(
      errors.some((e) =>
        e.includes(
          '/services/worker/depends_on/redis/condition must be equal to one of the allowed values',
        ),
      ),
      errors.join('\n'),
    );
  });

  test('has Redis, one watcher and workers that --scale can multiply', () => {
    assert.deepEqual(Object.keys(compose.services).sort(), ['redis', 'watcher', 'worker']);
    const { watcher, worker } = compose.services;
    assert.deepEqual(watcher!.command, ['node', 'dist/apps/watcher/src/main.js']);
    assert.deepEqual(worker!.command, ['node', 'dist/apps/worker/src/main.js']);
    // A fixed container name or host port makes `docker compose up --scale worker=3` fail.
    assert.equal(worker!.container_name, undefined);
    assert.equal(worker!.ports, undefined);
    assert.equal(watcher!.deploy?.replicas ?? 1, 1);
  });

  test('mounts the kubeconfig read-only and checks the health of every service', () => {
    for (const [name, service] of Object.entries(compose.services)) {
      assert.ok(service.healthcheck?.test.length, `${name} has a healthcheck`);
      if (name === 'redis') continue;
      assert.ok(
        service.volumes?.some((v) => /:\/kube\/config:ro$/.test(v)),
        `${name} mounts the kubeconfig read-only`,
      );
      assert.equal(service.environment?.KUBECONFIG, '/kube/config');
      assert.equal(service.depends_on?.redis?.condition, 'service_healthy');
      assert.equal(service.read_only, true);
      assert.deepEqual(service.cap_drop, ['ALL']);
    }
  });

  test('sets no environment variable the Helm chart does not set, and documents every one it interpolates', () => {
    // The chart in each of its Redis modes: one server, Cluster, Sentinel.
    const renders = [
      renderChart(),
      renderChart(['helm/backupjob-operator/ci/redis-cluster-values.yaml']),
      renderChart(['helm/backupjob-operator/ci/redis-sentinel-values.yaml']),
    ];
    for (const component of ['watcher', 'worker']) {
      const chartNames = new Set(
        renders.flatMap((objects) => {
          const deployment = findObject(
            objects,
            'Deployment',
            `backup-operator-${component}`,
          ) as unknown as {
            spec: { template: { spec: { containers: { env: { name: string }[] }[] } } };
          };
          return deployment.spec.template.spec.containers[0]!.env.map((e) => e.name);
        }),
      );
      const composeNames = Object.keys(compose.services[component]!.environment ?? {});
      // KUBECONFIG is absent in a cluster (in-cluster config) by design.
      const unknown = composeNames.filter((n) => n !== 'KUBECONFIG' && !chartNames.has(n));
      assert.deepEqual(unknown, [], `${component} variables the chart does not set`);
    }
    const header = text.slice(0, text.indexOf('\nname:'));
    const interpolated = new Set([...text.matchAll(/\$\{([A-Z_]+)/g)].map((m) => m[1]!));
    const undocumented = [...interpolated].filter((v) => !header.includes(v));
    assert.deepEqual(undocumented, []);
  });
});

describe('docker-compose.emulator.yml', () => {
  const overrideText = readFileSync('docker-compose.emulator.yml', 'utf8');
  const override = parse(overrideText) as { services: Record<string, Service> };

  test('validates against the Compose Specification schema and documents what it interpolates', () => {
    assert.deepEqual(schemaErrors(override), []);
    const header = overrideText.slice(0, overrideText.indexOf('\nservices:'));
    const interpolated = [...overrideText.matchAll(/\$\{([A-Z_]+)/g)].map((m) => m[1]!);
    const documented = (v: string) => header.includes(v) || text.includes(`#   ${v}`);
    assert.deepEqual(
      interpolated.filter((v) => !documented(v)),
      [],
    );
  });

  test("replaces the operator's kubeconfig mount at the same path and adds only the emulator", () => {
    assert.deepEqual(Object.keys(override.services).sort(), ['apiserver', 'watcher', 'worker']);
    for (const name of ['watcher', 'worker']) {
      assert.deepEqual(override.services[name]!.volumes, [
        './config/compose/operator.kubeconfig:/kube/config:ro',
      ]);
      assert.equal(override.services[name]!.depends_on?.apiserver?.condition, 'service_healthy');
    }
    const apiserver = override.services.apiserver!;
    assert.equal(apiserver.read_only, true);
    assert.deepEqual(apiserver.cap_drop, ['ALL']);
  });
});
