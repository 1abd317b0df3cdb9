import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import {
  CHART,
  CI_VALUES,
  NAMESPACE,
  findObject,
  helm,
  renderChart,
  type KubeObject,
} from './support/helm.js';
import { crossCheck, validateObject } from './support/kube-schema.js';

interface Container {
  name: string;
  env: {
    name: string;
    value?: string;
    valueFrom?: { secretKeyRef?: { name: string; key: string } };
  }[];
  securityContext: Record<string, unknown>;
  livenessProbe: { httpGet: { path: string; port: string } };
  readinessProbe: { httpGet: { path: string; port: string } };
  ports: { name: string; containerPort: number }[];
  volumeMounts?: { name: string; mountPath: string; readOnly?: boolean }[];
  command: string[];
  resources: { requests?: Record<string, string>; limits?: Record<string, string> };
}
interface PodSpec {
  containers: Container[];
  securityContext: Record<string, unknown>;
  serviceAccountName?: string;
  automountServiceAccountToken?: boolean;
  volumes?: { name: string; secret?: { secretName: string } }[];
}
type Deployment = KubeObject & {
  spec: { replicas?: number; template: { spec: PodSpec } };
};

const deployment = (objects: KubeObject[], component: string): Deployment =>
  findObject(objects, 'Deployment', `backup-operator-${component}`) as Deployment;
const container = (objects: KubeObject[], component: string): Container =>
  deployment(objects, component).spec.template.spec.containers[0]!;
const env = (c: Container, name: string) => c.env.find((e) => e.name === name);
const kinds = (objects: KubeObject[]): string[] => objects.map((o) => o.kind);

describe('helm lint --strict', () => {
  test('passes with the default values', () => {
    const run = helm(['lint', '--strict', CHART]);
    assert.equal(run.status, 0, run.stdout + run.stderr);
    assert.match(run.stdout, /1 chart\(s\) linted, 0 chart\(s\) failed/);
  });

  for (const values of CI_VALUES) {
    test(`passes with ${values}`, () => {
      const run = helm(['lint', '--strict', CHART, '--values', values]);
      assert.equal(run.status, 0, run.stdout + run.stderr);
    });
  }
});

describe('every rendered object validates against the Kubernetes schemas, unknown fields rejected', () => {
  for (const values of [undefined, ...CI_VALUES]) {
    test(values ?? 'default values', async () => {
      const objects = renderChart(values ? [values] : []);
      assert.ok(objects.length > 10, `only ${objects.length} objects rendered`);
      const problems = (await Promise.all(objects.map(validateObject))).flat();
      problems.push(...crossCheck(objects));
      assert.deepEqual(problems, []);
    });
  }
});

test('every optional value set at once renders valid objects', async () => {
  const objects = renderChart(['test/deploy/fixtures/every-option-values.yaml']);
  const problems = (await Promise.all(objects.map(validateObject))).flat();
  // The fixture brings its own watcher ServiceAccount.
  problems.push(...crossCheck(objects, ['existing-watcher']));
  assert.deepEqual(problems, []);
  const watcher = objects.find(
    (o) => o.kind === 'Deployment' && o.metadata.name === 'bjo-watcher',
  ) as Deployment;
  assert.equal(watcher.spec.template.spec.serviceAccountName, 'existing-watcher');
  assert.equal(
    env(watcher.spec.template.spec.containers[0]!, 'NODE_OPTIONS')?.value,
    '--max-old-space-size=200',
  );
});

describe('the validator itself', () => {
  const [crd, ...rendered] = renderChart();
  const worker = structuredClone(deployment(rendered, 'worker'));

  test('reports a field indented one level too shallow (the commonest template bug)', async () => {
    const broken = structuredClone(worker);
    const c = broken.spec.template.spec.containers[0]! as unknown as Record<string, unknown>;
    c.requests = (c.resources as Container['resources']).requests;
    assert.deepEqual(await validateObject(broken), [
      'Deployment/backup-operator-worker: .spec.template.spec.containers[0].requests: unknown field',
    ]);
  });

  test('reports wrong types and removed apiVersions', async () => {
    const typed = structuredClone(worker) as unknown as {
      spec: { replicas: unknown };
    } & KubeObject;
    typed.spec.replicas = 'two';
    assert.ok((await validateObject(typed)).some((p) => p.includes('.spec.replicas')));
    assert.deepEqual(await validateObject({ ...worker, apiVersion: 'apps/v1beta1' }), [
      'Deployment/backup-operator-worker: apiVersion apps/v1beta1 is not one the chart may use',
    ]);
  });

  test('reports a Service that selects no pod', () => {
    const isTarget = (o: KubeObject) =>
      o.kind === 'Service' && o.metadata.name === 'backup-operator-worker-metrics';
    const service = structuredClone(rendered.find(isTarget)!);
    (service.spec as { selector: Record<string, string> }).selector['app.kubernetes.io/component'] =
      'workr';
    assert.deepEqual(crossCheck([...rendered.filter((o) => !isTarget(o)), service]), [
      'Service/backup-operator-worker-metrics: selects no pod of the chart',
    ]);
  });

  test('checks the CRD the chart installs', async () => {
    assert.equal(crd?.kind, 'CustomResourceDefinition');
    const broken = structuredClone(crd!) as KubeObject & {
      spec: { versions: { schema: { openAPIV3Schema: Record<string, unknown> } }[] };
    };
    broken.spec.versions[0]!.schema.openAPIV3Schema.propertiez = {};
    assert.deepEqual(await validateObject(broken), [
      'CustomResourceDefinition/backupjobs.ops.example.com: .spec.versions[0].schema.openAPIV3Schema.propertiez: unknown field',
    ]);
  });
});

describe('defaults', () => {
  const objects = renderChart();

  test('the watcher runs 2 leader-elected replicas with the Lease in the release namespace', () => {
    assert.equal(deployment(objects, 'watcher').spec.replicas, 2);
    const watcher = container(objects, 'watcher');
    assert.deepEqual(watcher.command, [
      'node',
      '--max-semi-space-size=16',
      'dist/apps/watcher/src/main.js',
    ]);
    assert.equal(env(watcher, 'LEADER_ELECTION_NAMESPACE')?.value, NAMESPACE);
    assert.equal(env(watcher, 'LEADER_ELECTION_ID')?.value, 'backup-operator-watcher');
    assert.deepEqual(env(watcher, 'POD_NAME')?.valueFrom, {
      fieldRef: { fieldPath: 'metadata.name' },
    } as never);
  });

  test("each app's node options go before its entry point, a list of its own replaces the default, and a value not starting with -- is refused", () => {
    const objects2 = renderChart(
      [],
      [
        'worker.nodeArgs[0]=--max-semi-space-size=32',
        'worker.nodeArgs[1]=--max-old-space-size=300',
      ],
    );
    assert.deepEqual(container(objects2, 'worker').command, [
      'node',
      '--max-semi-space-size=32',
      '--max-old-space-size=300',
      'dist/apps/worker/src/main.js',
    ]);
    assert.deepEqual(container(objects2, 'watcher').command, [
      'node',
      '--max-semi-space-size=16',
      'dist/apps/watcher/src/main.js',
    ]);
    assert.throws(
      () => renderChart([], ['watcher.nodeArgs[0]=max-semi-space-size=32']),
      /nodeArgs/,
    );
  });

  test('the worker gets its replicas, concurrency, shards and backup image', () => {
    const objects2 = renderChart(
      [],
      ['worker.replicas=5', 'worker.concurrency=3', 'worker.shards=0-7'],
    );
    assert.equal(deployment(objects2, 'worker').spec.replicas, 5);
    const worker = container(objects2, 'worker');
    assert.deepEqual(worker.command, [
      'node',
      '--max-semi-space-size=16',
      'dist/apps/worker/src/main.js',
    ]);
    assert.equal(env(worker, 'WORKER_CONCURRENCY')?.value, '3');
    assert.equal(env(worker, 'WORKER_SHARDS')?.value, '0-7');
    assert.equal(env(worker, 'BACKUP_IMAGE')?.value, 'ghcr.io/example/backupjob-backup:0.1.0');
  });

  test('both processes get the same common configuration, Redis from the chart Secret', () => {
    for (const component of ['watcher', 'worker']) {
      const c = container(objects, component);
      for (const [name, value] of [
        ['QUEUE_SHARDS', '16'],
        ['METRICS_PORT', '8080'],
        ['HEALTH_PORT', '8081'],
        ['WATCH_NAMESPACES', ''],
        ['LOG_LEVEL', 'info'],
      ]) {
        assert.equal(env(c, name!)?.value, value, `${component} ${name}`);
      }
      assert.deepEqual(env(c, 'REDIS_URL')?.valueFrom?.secretKeyRef, {
        name: 'backup-operator-redis',
        key: 'url',
      });
      assert.deepEqual(env(c, 'REDIS_PASSWORD')?.valueFrom?.secretKeyRef, {
        name: 'backup-operator-redis',
        key: 'password',
      });
    }
    const secret = findObject(objects, 'Secret', 'backup-operator-redis') as KubeObject & {
      stringData: Record<string, string>;
    };
    assert.equal(secret.stringData.url, `redis://backup-operator-redis.${NAMESPACE}.svc:6379/0`);
    findObject(objects, 'Deployment', 'backup-operator-redis');
  });

  test('the bundled Redis requires a generated password, probes with it, and is hardened like the operator', () => {
    const secret = findObject(objects, 'Secret', 'backup-operator-redis') as KubeObject & {
      stringData: Record<string, string>;
    };
    assert.match(secret.stringData.password ?? '', /^[A-Za-z0-9]{32}$/);
    const other = findObject(renderChart(), 'Secret', 'backup-operator-redis') as typeof secret;
    assert.notEqual(other.stringData.password, secret.stringData.password, 'not a fixed default');
    const redis = container(objects, 'redis') as Container & { args: string[] };
    assert.deepEqual(redis.args.slice(-2), ['--requirepass', '$(REDIS_PASSWORD)']);
    for (const name of ['REDIS_PASSWORD', 'REDISCLI_AUTH'])
      assert.deepEqual(env(redis, name)?.valueFrom?.secretKeyRef, {
        name: 'backup-operator-redis',
        key: 'password',
      });
    const probes = redis as unknown as Record<string, { exec?: { command: string[] } }>;
    for (const probe of ['readinessProbe', 'livenessProbe'])
      assert.deepEqual(probes[probe]?.exec?.command, ['redis-cli', 'ping'], probe);
    assert.deepEqual(redis.securityContext, container(objects, 'worker').securityContext);
    assert.equal(
      deployment(objects, 'redis').spec.template.spec.securityContext.runAsNonRoot,
      true,
    );
    const given = findObject(
      renderChart([], ['redis.password=chosen']),
      'Secret',
      'backup-operator-redis',
    );
    assert.equal((given as typeof secret).stringData.password, 'chosen');
  });

  test('every pod is hardened: non-root, read-only root, no capabilities, RuntimeDefault seccomp', () => {
    for (const d of objects.filter((o) => o.kind === 'Deployment') as Deployment[]) {
      const pod = d.spec.template.spec;
      assert.equal(pod.securityContext.runAsNonRoot, true, d.metadata.name);
      assert.deepEqual(pod.securityContext.seccompProfile, { type: 'RuntimeDefault' });
      for (const c of pod.containers) {
        assert.equal(c.securityContext.allowPrivilegeEscalation, false);
        assert.equal(c.securityContext.readOnlyRootFilesystem, true);
        assert.deepEqual(c.securityContext.capabilities, { drop: ['ALL'] });
        assert.ok(c.resources.requests && c.resources.limits, `${c.name} has requests and limits`);
      }
    }
    assert.equal(
      deployment(objects, 'redis').spec.template.spec.automountServiceAccountToken,
      false,
    );
    for (const component of ['watcher', 'worker']) {
      const sa = findObject(objects, 'ServiceAccount', `backup-operator-${component}`);
      assert.equal(sa.automountServiceAccountToken, false);
      assert.equal(
        deployment(objects, component).spec.template.spec.automountServiceAccountToken,
        true,
      );
    }
  });

  test('probes hit /healthz and /readyz on the health port; metrics Services expose the metrics port', () => {
    for (const component of ['watcher', 'worker']) {
      const c = container(objects, component);
      assert.deepEqual(c.livenessProbe.httpGet, { path: '/healthz', port: 'health' });
      assert.deepEqual(c.readinessProbe.httpGet, { path: '/readyz', port: 'health' });
      assert.deepEqual(
        c.ports.map((p) => [p.name, p.containerPort]),
        [
          ['metrics', 8080],
          ['health', 8081],
        ],
      );
      const service = findObject(
        objects,
        'Service',
        `backup-operator-${component}-metrics`,
      ) as KubeObject & { spec: { ports: { port: number; targetPort: string }[] } };
      assert.deepEqual(
        service.spec.ports.map((p) => [p.port, p.targetPort]),
        [[8080, 'metrics']],
      );
    }
  });

  test('PodDisruptionBudgets guard both components; no optional object is rendered', () => {
    findObject(objects, 'PodDisruptionBudget', 'backup-operator-watcher');
    findObject(objects, 'PodDisruptionBudget', 'backup-operator-worker');
    for (const kind of [
      'HorizontalPodAutoscaler',
      'ScaledObject',
      'ServiceMonitor',
      'NetworkPolicy',
    ]) {
      assert.ok(!kinds(objects).includes(kind), kind);
    }
  });

  test('a changed Redis connection changes the checksum/redis annotation of both pod templates', () => {
    const annotation = (o: KubeObject[], component: string) =>
      (
        deployment(o, component).spec.template as unknown as {
          metadata: { annotations: Record<string, string> };
        }
      ).metadata.annotations['checksum/redis'];
    const other = renderChart(
      [],
      ['redis.internal.enabled=false', 'redis.url=redis://elsewhere:6379'],
    );
    for (const component of ['watcher', 'worker']) {
      assert.ok(annotation(objects, component), component);
      assert.notEqual(annotation(objects, component), annotation(other, component), component);
    }
  });
});

describe('scenarios', () => {
  test('namespace-scoped: Roles in each watched namespace and no cluster-wide access', () => {
    const objects = renderChart([`${CHART}/ci/namespaced-values.yaml`]);
    // TokenReview and SubjectAccessReview exist only cluster-wide: secure metrics need them there.
    const clusterWide = objects
      .filter((o) => o.kind.startsWith('Cluster'))
      .map((o) => `${o.kind}/${o.metadata.name}`);
    assert.deepEqual(clusterWide.sort(), [
      'ClusterRole/backup-operator-metrics-auth',
      'ClusterRole/backup-operator-metrics-reader',
      'ClusterRoleBinding/backup-operator-metrics-auth',
      'ClusterRoleBinding/backup-operator-metrics-reader',
    ]);
    const roles = objects
      .filter((o) => o.kind === 'Role')
      .map((o) => `${o.metadata.namespace}/${o.metadata.name}`);
    assert.deepEqual(roles.sort(), [
      `${NAMESPACE}/backup-operator-watcher-leader-election`,
      'databases/backup-operator-watcher',
      'databases/backup-operator-worker',
      'ops/backup-operator-watcher',
      'ops/backup-operator-worker',
    ]);
    assert.equal(env(container(objects, 'watcher'), 'WATCH_NAMESPACES')?.value, 'ops,databases');
  });

  test('HA off: one replica each and no PodDisruptionBudget that would block node drains', () => {
    const objects = renderChart([`${CHART}/ci/ha-off-values.yaml`]);
    assert.equal(deployment(objects, 'watcher').spec.replicas, 1);
    assert.equal(deployment(objects, 'worker').spec.replicas, 1);
    assert.ok(!kinds(objects).includes('PodDisruptionBudget'));
  });

  test('ServiceMonitor, HPA and NetworkPolicy on: the HPA owns the worker replica count', () => {
    const objects = renderChart([`${CHART}/ci/monitoring-autoscaling-netpol-values.yaml`]);
    const monitor = findObject(objects, 'ServiceMonitor', 'backup-operator') as KubeObject & {
      spec: { endpoints: { port: string; path: string }[] };
    };
    assert.deepEqual(
      monitor.spec.endpoints.map((e) => [e.port, e.path]),
      [['metrics', '/metrics']],
    );
    assert.equal(monitor.metadata.labels?.release, 'kube-prometheus-stack');
    // Secure metrics (the default): HTTPS with the chart's Prometheus ServiceAccount token.
    const endpoint = monitor.spec.endpoints[0] as unknown as Record<string, unknown>;
    assert.equal(endpoint.scheme, 'https');
    assert.deepEqual(endpoint.authorization, {
      type: 'Bearer',
      credentials: { name: 'backup-operator-prometheus-token', key: 'token' },
    });
    const token = findObject(objects, 'Secret', 'backup-operator-prometheus-token');
    assert.equal(
      token.metadata.annotations?.['kubernetes.io/service-account.name'],
      'backup-operator-prometheus',
    );
    const worker = container(objects, 'worker');
    assert.equal(env(worker, 'METRICS_SECURE')?.value, 'true');
    const certDir = env(worker, 'METRICS_CERT_DIR')?.value;
    assert.ok(worker.volumeMounts?.some((m) => m.mountPath === certDir && m.readOnly));
    const plain = renderChart(
      [`${CHART}/ci/monitoring-autoscaling-netpol-values.yaml`],
      ['metrics.secure=false'],
    );
    const plainMonitor = findObject(plain, 'ServiceMonitor', 'backup-operator');
    assert.equal(JSON.stringify(plainMonitor).includes('authorization'), false);
    assert.equal(env(container(plain, 'worker'), 'METRICS_SECURE')?.value, 'false');
    const hpa = findObject(
      objects,
      'HorizontalPodAutoscaler',
      'backup-operator-worker',
    ) as KubeObject & { spec: { scaleTargetRef: { name: string }; maxReplicas: number } };
    assert.equal(hpa.spec.scaleTargetRef.name, 'backup-operator-worker');
    assert.equal(hpa.spec.maxReplicas, 12);
    assert.equal(deployment(objects, 'worker').spec.replicas, undefined);
    const policies = objects.filter((o) => o.kind === 'NetworkPolicy').map((o) => o.metadata.name);
    assert.deepEqual(policies.sort(), [
      'backup-operator-redis',
      'backup-operator-watcher',
      'backup-operator-worker',
    ]);
  });

  test('external Redis with TLS: URL and password from the user Secret, private CA trusted', () => {
    const objects = renderChart([`${CHART}/ci/external-redis-tls-values.yaml`]);
    assert.ok(
      !objects.some((o) => o.metadata.name === 'backup-operator-redis'),
      'no in-chart Redis or Secret',
    );
    for (const component of ['watcher', 'worker']) {
      const c = container(objects, component);
      assert.deepEqual(env(c, 'REDIS_URL')?.valueFrom?.secretKeyRef, {
        name: 'backupjob-redis',
        key: 'url',
      });
      assert.deepEqual(env(c, 'REDIS_PASSWORD')?.valueFrom?.secretKeyRef, {
        name: 'backupjob-redis',
        key: 'password',
      });
      assert.equal(env(c, 'NODE_EXTRA_CA_CERTS')?.value, '/etc/backupjob-operator/redis-ca/ca.crt');
      assert.deepEqual(
        c.volumeMounts?.find((m) => m.name === 'redis-ca'),
        { name: 'redis-ca', mountPath: '/etc/backupjob-operator/redis-ca', readOnly: true },
      );
      const volume = deployment(objects, component).spec.template.spec.volumes?.find(
        (v) => v.name === 'redis-ca',
      );
      assert.equal(volume?.secret?.secretName, 'backupjob-redis-ca');
    }
  });

  test('Redis Cluster: the nodes in REDIS_CLUSTER_NODES, user and TLS set, password from the user Secret', () => {
    const objects = renderChart([`${CHART}/ci/redis-cluster-values.yaml`]);
    for (const component of ['watcher', 'worker']) {
      const c = container(objects, component);
      assert.equal(env(c, 'REDIS_URL'), undefined);
      assert.equal(
        env(c, 'REDIS_CLUSTER_NODES')?.value,
        [0, 1, 2].map((i) => `redis-cluster-${i}.redis-cluster-headless.redis.svc:6379`).join(','),
      );
      assert.equal(env(c, 'REDIS_USERNAME')?.value, 'backupjob-operator');
      assert.equal(env(c, 'REDIS_TLS')?.value, 'true');
      assert.deepEqual(env(c, 'REDIS_PASSWORD')?.valueFrom?.secretKeyRef, {
        name: 'backupjob-redis',
        key: 'password',
      });
      assert.equal(env(c, 'REDIS_SENTINELS'), undefined);
    }
    assert.ok(!objects.some((o) => o.metadata.name === 'backup-operator-redis'));
  });

  test('Redis Sentinel: Sentinels and master name, both passwords from the user Secret, the Sentinel port allowed out', () => {
    const objects = renderChart([`${CHART}/ci/redis-sentinel-values.yaml`]);
    for (const component of ['watcher', 'worker']) {
      const c = container(objects, component);
      assert.equal(env(c, 'REDIS_URL'), undefined);
      assert.match(
        env(c, 'REDIS_SENTINELS')?.value ?? '',
        /^redis-node-0\.redis-headless\.redis\.svc:26379,/,
      );
      assert.equal(env(c, 'REDIS_SENTINEL_MASTER')?.value, 'mymaster');
      assert.deepEqual(env(c, 'REDIS_SENTINEL_PASSWORD')?.valueFrom?.secretKeyRef, {
        name: 'backupjob-redis',
        key: 'sentinel-password',
      });
      assert.equal(env(c, 'REDIS_TLS'), undefined);
      const policy = findObject(
        objects,
        'NetworkPolicy',
        `backup-operator-${component}`,
      ) as KubeObject & {
        spec: { egress: { ports?: { port: number | string }[] }[] };
      };
      const redisPorts = policy.spec.egress.at(-1)?.ports?.map((p) => p.port);
      assert.deepEqual(redisPorts, [6379, 26379]);
    }
  });

  test('Cluster or Sentinel passwords given as values go to the chart Secret, without a URL', () => {
    const objects = renderChart(
      [],
      [
        'redis.internal.enabled=false',
        'redis.mode=sentinel',
        'redis.sentinel.nodes={s-0:26379}',
        'redis.sentinel.masterName=mymaster',
        'redis.password=data-pw',
        'redis.sentinel.password=sentinel-pw',
      ],
    );
    const secret = findObject(objects, 'Secret', 'backup-operator-redis') as KubeObject & {
      stringData: Record<string, string>;
    };
    assert.deepEqual(secret.stringData, { password: 'data-pw', sentinelPassword: 'sentinel-pw' });
    const c = container(objects, 'worker');
    assert.deepEqual(env(c, 'REDIS_SENTINEL_PASSWORD')?.valueFrom?.secretKeyRef, {
      name: 'backup-operator-redis',
      key: 'sentinelPassword',
    });
    const noSecret = renderChart(
      [],
      ['redis.internal.enabled=false', 'redis.mode=cluster', 'redis.cluster.nodes={a:6379}'],
    );
    assert.ok(!noSecret.some((o) => o.metadata.name === 'backup-operator-redis'));
    assert.equal(env(container(noSecret, 'worker'), 'REDIS_PASSWORD'), undefined);
  });

  test('KEDA: a ScaledObject on the queue depth owns the worker replica count', () => {
    const objects = renderChart([`${CHART}/ci/keda-values.yaml`]);
    const scaled = findObject(objects, 'ScaledObject', 'backup-operator-worker') as KubeObject & {
      spec: { triggers: { type: string; metadata: Record<string, string> }[] };
    };
    assert.equal(scaled.spec.triggers[0]?.type, 'prometheus');
    assert.match(
      scaled.spec.triggers[0]!.metadata.query!,
      /workqueue_depth\{namespace="backup-operator-system"\}/,
    );
    assert.equal(deployment(objects, 'worker').spec.replicas, undefined);
    const secret = findObject(objects, 'Secret', 'backup-operator-redis') as KubeObject & {
      stringData: Record<string, string>;
    };
    assert.deepEqual(secret.stringData, {
      url: 'redis://redis-master.redis.svc:6379/0',
      password: 'change-me',
    });
  });
});

describe('the admission policy', () => {
  const served = ['--api-versions', 'admissionregistration.k8s.io/v1/ValidatingAdmissionPolicy'];
  const kinds = (objects: KubeObject[]) =>
    objects.filter((o) => o.kind.startsWith('ValidatingAdmissionPolicy')).map((o) => o.kind);

  test('is rendered, valid, where the cluster serves ValidatingAdmissionPolicy v1', async () => {
    const objects = renderChart([], [], served);
    assert.deepEqual(kinds(objects), [
      'ValidatingAdmissionPolicy',
      'ValidatingAdmissionPolicyBinding',
    ]);
    const policies = objects.filter((o) => o.kind.startsWith('ValidatingAdmissionPolicy'));
    assert.deepEqual((await Promise.all(policies.map(validateObject))).flat(), []);
  });

  test('is left out where the cluster does not serve it, and by admissionPolicy.enabled=false', () => {
    assert.deepEqual(kinds(renderChart()), []);
    assert.deepEqual(kinds(renderChart([], ['admissionPolicy.enabled=false'], served)), []);
  });
});
