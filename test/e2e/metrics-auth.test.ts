import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { request } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { parseAllDocuments } from 'yaml';
import { type KubeObject, selfSignedCertificate } from '#apiserver-emulator';
import {
  eventually,
  type ManagedProcess,
  OPERATOR_NAMESPACE,
  operatorRbacDocuments,
  type OperatorSystem,
  startOperatorSystem,
} from '#testing';
import { helm, templateArgs } from '../deploy/support/helm.js';

// Secure metrics against the emulator's TokenReview and SubjectAccessReview, RBAC enforced, with
// the chart's own metrics RBAC (rendered for the names the operator system uses).

const FULLNAME = 'backupjob-operator';
const PROMETHEUS = `${FULLNAME}-prometheus`;

let sys: OperatorSystem;
let worker: ManagedProcess;
const certDir = mkdtempSync(join(tmpdir(), 'metrics-tls-'));

function chartMetricsRbac(): KubeObject[] {
  const run = helm([
    ...templateArgs([], [`fullnameOverride=${FULLNAME}`]),
    '--namespace',
    OPERATOR_NAMESPACE,
    '--show-only',
    'templates/metrics-auth.yaml',
  ]);
  if (run.status !== 0) throw new Error(`helm template failed: ${run.stderr}`);
  // The token Secret is filled in by a controller the emulator does not run; tokens are issued below.
  return parseAllDocuments(run.stdout)
    .map((d) => d.toJS() as KubeObject | null)
    .filter((o): o is KubeObject => o !== null && o.kind !== 'Secret');
}

before(async () => {
  const tls = selfSignedCertificate();
  writeFileSync(join(certDir, 'tls.crt'), tls.cert);
  writeFileSync(join(certDir, 'tls.key'), tls.key);
  sys = await startOperatorSystem({
    rbac: true,
    watchers: 0,
    workers: 0,
    rbacDocuments: [...operatorRbacDocuments(), ...chartMetricsRbac()],
  });
  sys.emulator.objects.create({
    apiVersion: 'v1',
    kind: 'ServiceAccount',
    metadata: { name: 'nosy', namespace: OPERATOR_NAMESPACE },
  });
  worker = await sys.startWorker({ METRICS_SECURE: 'true', METRICS_CERT_DIR: certDir });
});

after(async () => {
  await sys?.stop();
  rmSync(certDir, { recursive: true, force: true });
});

function scrape(token?: string): Promise<{ code: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: '127.0.0.1',
        port: sys.portsOf(worker).metrics,
        path: '/metrics',
        rejectUnauthorized: false,
        headers: token ? { authorization: `Bearer ${token}` } : {},
      },
      (res) => {
        let body = '';
        res.on('data', (d: Buffer) => (body += d.toString()));
        res.on('end', () => resolve({ code: res.statusCode ?? 0, body }));
      },
    );
    req.on('error', reject);
    req.end();
  });
}

test('secure /metrics: 401 without a token, 403 without the permission, 200 for Prometheus', async () => {
  const first = await eventually(
    'the HTTPS metrics listener',
    () => scrape().catch(() => undefined),
    60_000,
  );
  assert.equal(first.code, 401);
  assert.equal((await scrape('not-a-token')).code, 401);
  const nosy = await scrape(sys.emulator.serviceAccountToken(OPERATOR_NAMESPACE, 'nosy'));
  assert.equal(nosy.code, 403);
  const prometheus = await scrape(sys.emulator.serviceAccountToken(OPERATOR_NAMESPACE, PROMETHEUS));
  assert.equal(prometheus.code, 200);
  assert.match(prometheus.body, /^controller_runtime_max_concurrent_reconciles/m);
  // The worker asked the API server under its own identity, which the chart allows to ask.
  const denied = sys.emulator.log
    .entries({ code: 403 })
    .filter((r) => r.resource === 'tokenreviews' || r.resource === 'subjectaccessreviews');
  assert.deepEqual(denied, []);
});
