import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { after, before, describe, test } from 'node:test';
import { parse } from 'yaml';
import type { Emulator } from '../src/index.js';
import { CRD_FILE, http, withEmulator } from './support.js';

const BJ = '/apis/ops.example.com/v1alpha1/namespaces/ops/backupjobs';
const CM = '/api/v1/namespaces/ops/configmaps';

function backupJob(name: string, spec: Record<string, unknown> = {}) {
  return {
    apiVersion: 'ops.example.com/v1alpha1',
    kind: 'BackupJob',
    metadata: { name },
    spec: { target: 'mysql', schedule: '10 2 * * *', ...spec },
  };
}

describe('object semantics over REST', () => {
  let emu: Emulator;
  let call: ReturnType<typeof http>;

  before(async () => {
    emu = await withEmulator({ namespaces: ['ops'] });
    call = http(emu);
    const crd = await call(
      'POST',
      '/apis/apiextensions.k8s.io/v1/customresourcedefinitions',
      parse(readFileSync(CRD_FILE, 'utf8')),
    );
    assert.equal(crd.status, 201, crd.text);
  });
  after(() => emu.stop());

  // api-concepts #resource-versions; api-conventions "Concurrency Control and Consistency"
  test('resourceVersion is monotonic and a stale update gets 409 Conflict', async () => {
    const a = await call('POST', CM, { metadata: { name: 'rv' }, data: { a: '1' } });
    const b = await call('PUT', `${CM}/rv`, { ...a.json, data: { a: '2' } });
    assert.equal(b.status, 200);
    assert.ok(Number(b.json.metadata.resourceVersion) > Number(a.json.metadata.resourceVersion));
    const stale = await call('PUT', `${CM}/rv`, { ...a.json, data: { a: '3' } });
    assert.equal(stale.status, 409);
    assert.equal(stale.json.reason, 'Conflict');
    assert.match(stale.json.message, /the object has been modified/);
  });

  // apiextensions customresource strategy: AllowUnconditionalUpdate=false
  test('a custom resource update without resourceVersion is rejected as Invalid', async () => {
    await call('POST', BJ, backupJob('norv'));
    const r = await call('PUT', `${BJ}/norv`, backupJob('norv', { target: 'pg' }));
    assert.equal(r.status, 422);
    assert.match(
      r.json.message,
      /metadata.resourceVersion: Invalid value: "0x0": must be specified for an update/,
    );
  });

  // docs/reference/kubernetes-api/common-definitions/object-meta/ (uid, creationTimestamp, generateName)
  test('create assigns uid, creationTimestamp, generation and a generated name', async () => {
    const r = await call(
      'POST',
      BJ,
      { ...backupJob(''), metadata: { generateName: 'gen-' } },
      { 'User-Agent': 'node-fetch/1.0' },
    );
    assert.equal(r.status, 201, r.text);
    assert.match(r.json.metadata.name, /^gen-[bcdfghjklmnpqrstvwxz2456789]{5}$/);
    assert.match(r.json.metadata.uid, /^[0-9a-f-]{36}$/);
    assert.match(r.json.metadata.creationTimestamp, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
    assert.equal(r.json.metadata.generation, 1);
    assert.equal(
      r.json.metadata.managedFields[0].manager,
      'node-fetch',
      'manager from the User-Agent',
    );
  });

  // CRD docs #status-subresource: generation tracks spec only; main endpoint ignores status; /status ignores the rest
  test('status subresource and generation', async () => {
    const created = await call('POST', BJ, { ...backupJob('gen'), status: { ready: true } });
    assert.equal(created.json.status, undefined, 'status dropped on create');
    const status = await call(
      'PATCH',
      `${BJ}/gen/status`,
      { status: { ready: true, message: 'ok' }, spec: { target: 'ignored' } },
      { 'Content-Type': 'application/merge-patch+json' },
    );
    assert.equal(status.status, 200, status.text);
    assert.equal(status.json.metadata.generation, 1);
    assert.equal(status.json.spec.target, 'mysql');
    assert.equal(status.json.status.message, 'ok');
    const main = await call(
      'PATCH',
      `${BJ}/gen`,
      { spec: { target: 'pg' }, status: { message: 'ignored' } },
      { 'Content-Type': 'application/merge-patch+json' },
    );
    assert.equal(main.json.metadata.generation, 2);
    assert.equal(main.json.status.message, 'ok');
    const labels = await call(
      'PATCH',
      `${BJ}/gen`,
      { metadata: { labels: { a: 'b' } } },
      { 'Content-Type': 'application/merge-patch+json' },
    );
    assert.equal(labels.json.metadata.generation, 2, 'metadata changes do not bump generation');
    const noop = await call(
      'PATCH',
      `${BJ}/gen`,
      { spec: { target: 'pg' } },
      { 'Content-Type': 'application/merge-patch+json' },
    );
    assert.equal(
      noop.json.metadata.resourceVersion,
      labels.json.metadata.resourceVersion,
      'a no-op write changes nothing',
    );
  });

  // CRD docs #validation, #defaulting, #field-pruning; api-concepts #field-validation
  test('schema validation names the field, defaults apply, unknown fields are pruned or rejected', async () => {
    const bad = await call('POST', BJ, backupJob('bad', { retentionDays: 0, target: '' }));
    assert.equal(bad.status, 422);
    assert.equal(bad.json.reason, 'Invalid');
    assert.match(
      bad.json.message,
      /spec.retentionDays: Invalid value: 0: spec.retentionDays in body should be greater than or equal to 1/,
    );
    assert.ok(bad.json.details.causes.some((c: { field: string }) => c.field === 'spec.target'));
    const missing = await call('POST', BJ, { ...backupJob('missing'), spec: { target: 'x' } });
    assert.match(missing.json.message, /spec.schedule: Required value/);
    const warned = await call('POST', BJ, backupJob('warned', { bogus: 1 }));
    assert.equal(warned.status, 201);
    assert.equal(warned.json.spec.bogus, undefined);
    assert.equal(warned.json.spec.retentionDays, 7);
    assert.match(warned.headers.get('warning') ?? '', /unknown field \\"spec.bogus\\"/);
    const strict = await call(
      'POST',
      `${BJ}?fieldValidation=Strict`,
      backupJob('strict', { bogus: 1 }),
    );
    assert.equal(strict.status, 400);
    assert.match(strict.json.message, /strict decoding error: unknown field "spec.bogus"/);
  });

  // CRD docs #validation-rules (x-kubernetes-validations, CEL)
  test('CEL validation rules of the CRD reject a storage path with .. segments', async () => {
    const bad = await call(
      'POST',
      BJ,
      backupJob('cel', { storage: { claimName: 'backups', path: 'a/../b' } }),
    );
    assert.equal(bad.status, 422);
    assert.match(
      bad.json.message,
      /spec.storage.path: Invalid value: "object": path must not contain . or .. segments/,
    );
    const good = await call(
      'POST',
      BJ,
      backupJob('cel', { storage: { claimName: 'backups', path: 'a/b' } }),
    );
    assert.equal(good.status, 201, good.text);
  });

  // api-concepts #dry-run
  test('dryRun=All validates and defaults but stores nothing', async () => {
    const r = await call('POST', `${BJ}?dryRun=All`, backupJob('dry'));
    assert.equal(r.status, 201);
    assert.equal(r.json.spec.retentionDays, 7);
    assert.equal((await call('GET', `${BJ}/dry`)).status, 404);
    const bad = await call('POST', `${BJ}?dryRun=All`, backupJob('dry-bad', { retentionDays: 0 }));
    assert.equal(bad.status, 422, bad.text);
  });

  // docs/concepts/overview/working-with-objects/finalizers/; ValidateNoNewFinalizers
  test('finalizers hold a deleted object with deletionTimestamp until they are removed', async () => {
    await call('POST', BJ, {
      ...backupJob('fin'),
      metadata: { name: 'fin', finalizers: ['example.com/hold'] },
    });
    const del = await call('DELETE', `${BJ}/fin`);
    assert.equal(del.status, 200);
    assert.ok(del.json.metadata.deletionTimestamp);
    const more = await call(
      'PATCH',
      `${BJ}/fin`,
      { metadata: { finalizers: ['example.com/hold', 'another'] } },
      { 'Content-Type': 'application/merge-patch+json' },
    );
    assert.equal(more.status, 422);
    assert.match(
      more.json.message,
      /no new finalizers can be added if the object is being deleted/,
    );
    const done = await call(
      'PATCH',
      `${BJ}/fin`,
      { metadata: { finalizers: null } },
      { 'Content-Type': 'application/merge-patch+json' },
    );
    assert.equal(done.status, 200);
    assert.equal((await call('GET', `${BJ}/fin`)).status, 404);
  });

  // CRD docs: strategic merge patch is not supported for custom resources
  test('strategic merge patch: 415 on custom resources, merge keys on built-ins', async () => {
    await call('POST', BJ, backupJob('smp'));
    const cr = await call(
      'PATCH',
      `${BJ}/smp`,
      { spec: { target: 'x' } },
      { 'Content-Type': 'application/strategic-merge-patch+json' },
    );
    assert.equal(cr.status, 415);
    assert.equal(cr.json.reason, 'UnsupportedMediaType');
    const pods = '/api/v1/namespaces/ops/pods';
    await call('POST', pods, {
      metadata: { name: 'p' },
      spec: {
        containers: [
          { name: 'a', image: 'a:1' },
          { name: 'b', image: 'b:1' },
        ],
      },
    });
    const p = await call(
      'PATCH',
      `${pods}/p`,
      { spec: { containers: [{ name: 'b', image: 'b:2' }] } },
      { 'Content-Type': 'application/strategic-merge-patch+json' },
    );
    assert.deepEqual(
      p.json.spec.containers.map((c: { image: string }) => c.image),
      ['a:1', 'b:2'],
    );
  });

  // docs/tasks/manage-kubernetes-objects/update-api-object-kubectl-patch/ (JSON patch test op)
  test('JSON patch applies operations and a failed test is 422', async () => {
    await call('POST', CM, { metadata: { name: 'jp' }, data: { a: '1' } });
    const ok = await call('PATCH', `${CM}/jp`, [{ op: 'add', path: '/data/b', value: '2' }], {
      'Content-Type': 'application/json-patch+json',
    });
    assert.deepEqual(ok.json.data, { a: '1', b: '2' });
    const failed = await call(
      'PATCH',
      `${CM}/jp`,
      [{ op: 'test', path: '/data/a', value: 'nope' }],
      { 'Content-Type': 'application/json-patch+json' },
    );
    assert.equal(failed.status, 422);
  });

  // docs/reference/using-api/server-side-apply/
  test('server-side apply creates, merges list-map entries per manager and records the field manager', async () => {
    const apply = (query: string, body: string) =>
      call('PATCH', `${BJ}/ssa${query}`, body, { 'Content-Type': 'application/apply-patch+yaml' });
    const body = JSON.stringify(backupJob('ssa'));
    assert.equal((await apply('', body)).status, 422, 'fieldManager is required');
    assert.equal((await apply('?fieldManager=op', body)).status, 201);
    const conds = (types: string[]) =>
      `apiVersion: ops.example.com/v1alpha1\nkind: BackupJob\nmetadata: {name: ssa}\nstatus:\n  conditions:\n${types.map((t) => `  - {type: ${t}, status: "True", reason: R, message: m, lastTransitionTime: "2026-01-01T00:00:00Z"}`).join('\n')}\n`;
    const types = (r: { json: { status: { conditions: { type: string }[] } } }) =>
      r.json.status.conditions.map((c) => c.type);
    await call('PATCH', `${BJ}/ssa/status?fieldManager=a`, conds(['Ready']), {
      'Content-Type': 'application/apply-patch+yaml',
    });
    const both = await call('PATCH', `${BJ}/ssa/status?fieldManager=b`, conds(['Synced']), {
      'Content-Type': 'application/apply-patch+yaml',
    });
    assert.deepEqual(types(both), ['Ready', 'Synced'], 'each manager keeps its own list-map entry');
    const dropped = await call(
      'PATCH',
      `${BJ}/ssa/status?fieldManager=b`,
      conds([]).replace('conditions:\n', 'conditions: []\n'),
      { 'Content-Type': 'application/apply-patch+yaml' },
    );
    assert.deepEqual(
      types(dropped),
      ['Ready'],
      'a manager that stops applying an entry removes it',
    );
    assert.ok(
      both.json.metadata.managedFields.some(
        (m: { manager: string; operation: string; subresource?: string }) =>
          m.manager === 'a' && m.operation === 'Apply' && m.subresource === 'status',
      ),
    );
  });

  // docs/reference/using-api/server-side-apply/#conflicts
  test('server-side apply conflicts with another manager unless forced', async () => {
    await call('POST', `${BJ}?fieldManager=kubectl-create`, backupJob('owned'));
    const config = JSON.stringify(backupJob('owned', { target: 'postgres' }));
    const ct = { 'Content-Type': 'application/apply-patch+yaml' };
    const conflict = await call('PATCH', `${BJ}/owned?fieldManager=op`, config, ct);
    assert.equal(conflict.status, 409);
    assert.equal(
      conflict.json.message,
      'Apply failed with 1 conflict: conflict with "kubectl-create" using ops.example.com/v1alpha1: .spec.target',
    );
    assert.equal(conflict.json.details.causes[0].reason, 'FieldManagerConflict');
    const same = await call(
      'PATCH',
      `${BJ}/owned?fieldManager=op`,
      JSON.stringify(backupJob('owned')),
      ct,
    );
    assert.equal(same.status, 200, 'applying the values already there is no conflict');
    const forced = await call('PATCH', `${BJ}/owned?fieldManager=op&force=true`, config, ct);
    assert.equal(forced.status, 200);
    assert.equal(forced.json.spec.target, 'postgres');
    const creator = forced.json.metadata.managedFields.find(
      (m: { manager: string }) => m.manager === 'kubectl-create',
    );
    assert.equal(
      creator.fieldsV1['f:spec']['f:target'],
      undefined,
      'ownership moved to the forcing manager',
    );
  });

  // docs/reference/using-api/server-side-apply/#field-management
  test('an update takes ownership of the fields it changes from other managers', async () => {
    await call('POST', `${BJ}?fieldManager=creator`, backupJob('moved'));
    const patched = await call(
      'PATCH',
      `${BJ}/moved?fieldManager=editor`,
      { spec: { target: 'pg' } },
      { 'Content-Type': 'application/merge-patch+json' },
    );
    const entry = (m: string) =>
      patched.json.metadata.managedFields.find((e: { manager: string }) => e.manager === m);
    assert.equal(entry('creator').fieldsV1['f:spec']['f:target'], undefined);
    assert.deepEqual(entry('creator').fieldsV1['f:spec']['f:schedule'], {});
    assert.deepEqual(entry('editor').fieldsV1, { 'f:spec': { 'f:target': {} } });
    const conflict = await call(
      'PATCH',
      `${BJ}/moved?fieldManager=op`,
      JSON.stringify(backupJob('moved', { target: 'x' })),
      { 'Content-Type': 'application/apply-patch+yaml' },
    );
    assert.match(conflict.json.message, /^Apply failed with 1 conflict: conflict with "editor"/);
  });

  // docs/concepts/overview/working-with-objects/labels/#label-selectors, field-selectors/
  test('label and field selectors filter lists; unknown field labels are 400', async () => {
    for (const [name, tier] of [
      ['s1', 'web'],
      ['s2', 'db'],
      ['s3', 'web'],
    ])
      await call('POST', CM, { metadata: { name, labels: { tier: tier!, sel: 'yes' } } });
    const names = async (q: string) =>
      (await call('GET', `${CM}?${q}`)).json.items
        .map((i: { metadata: { name: string } }) => i.metadata.name)
        .sort();
    assert.deepEqual(await names('labelSelector=sel%3Dyes%2Ctier%3Dweb'), ['s1', 's3']);
    assert.deepEqual(await names('labelSelector=sel,tier%20notin%20(web)'), ['s2']);
    assert.deepEqual(await names('labelSelector=sel%3Dyes&fieldSelector=metadata.name!%3Ds1'), [
      's2',
      's3',
    ]);
    const bad = await call('GET', `${BJ}?fieldSelector=spec.target%3Ddb`);
    assert.equal(bad.status, 400);
    assert.equal(bad.json.message, 'field label not supported: spec.target');
  });

  // api-concepts #retrieving-large-results-sets-in-chunks
  test('limit and continue page through a list', async () => {
    for (let i = 0; i < 5; i++)
      await call('POST', CM, { metadata: { name: `page-${i}`, labels: { page: 'p' } } });
    const seen: string[] = [];
    let cont = '';
    for (let pages = 0; pages < 5; pages++) {
      const r = await call(
        'GET',
        `${CM}?labelSelector=page&limit=2${cont ? `&continue=${cont}` : ''}`,
      );
      seen.push(...r.json.items.map((i: { metadata: { name: string } }) => i.metadata.name));
      cont = r.json.metadata.continue ?? '';
      if (!cont) break;
    }
    assert.deepEqual(seen, ['page-0', 'page-1', 'page-2', 'page-3', 'page-4']);
  });

  // docs/concepts/overview/working-with-objects/namespaces/; admission NamespaceLifecycle
  test('objects need an existing namespace', async () => {
    const r = await call('POST', '/api/v1/namespaces/nowhere/configmaps', {
      metadata: { name: 'x' },
    });
    assert.equal(r.status, 404);
    assert.equal(r.json.message, 'namespaces "nowhere" not found');
  });

  // api-concepts: the object's apiVersion/kind must agree with the URL; namespaces must match
  test('body namespace or name that disagrees with the URL is a 400', async () => {
    const ns = await call('POST', CM, { metadata: { name: 'x', namespace: 'other' } });
    assert.equal(ns.status, 400);
    assert.match(
      ns.json.message,
      /the namespace of the provided object does not match the namespace sent on the request/,
    );
    const kind = await call('POST', CM, {
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name: 'x' },
    });
    assert.equal(kind.status, 400);
  });

  // docs/reference/kubernetes-api/cluster-resources/event-v1/: one storage, two APIs
  test('events.k8s.io/v1 Events show up as core/v1 Events with involvedObject', async () => {
    const r = await call('POST', '/apis/events.k8s.io/v1/namespaces/ops/events', {
      metadata: { generateName: 'bj.' },
      eventTime: '2026-12-02T10:11:26.270000Z',
      reportingController: 'backupjob-operator',
      reportingInstance: 'w-1',
      action: 'Reconcile',
      reason: 'Synced',
      type: 'Normal',
      note: 'all good',
      regarding: {
        kind: 'BackupJob',
        name: 'gen',
        namespace: 'ops',
        uid: 'u-1',
        apiVersion: 'ops.example.com/v1alpha1',
      },
    });
    assert.equal(r.status, 201, r.text);
    assert.equal(r.json.apiVersion, 'events.k8s.io/v1');
    const core = await call(
      'GET',
      '/api/v1/namespaces/ops/events?fieldSelector=involvedObject.uid%3Du-1',
    );
    assert.equal(core.json.items.length, 1);
    const ev = core.json.items[0];
    assert.equal(ev.message, 'all good');
    assert.equal(ev.involvedObject.name, 'gen');
    assert.equal(ev.source.component, 'backupjob-operator');
  });

  // A chart's other kinds are stored as given (no controllers behind them).
  test('Deployments, Services and PodDisruptionBudgets are served', async () => {
    const d = await call('POST', '/apis/apps/v1/namespaces/ops/deployments', {
      metadata: { name: 'web' },
      spec: {
        replicas: 2,
        selector: { matchLabels: { app: 'web' } },
        template: {
          metadata: { labels: { app: 'web' } },
          spec: { containers: [{ name: 'c', image: 'i' }] },
        },
      },
      status: { replicas: 9 },
    });
    assert.equal(d.status, 201, d.text);
    assert.equal(d.json.metadata.generation, 1);
    assert.equal(d.json.status, undefined);
    assert.equal(
      (
        await call('POST', '/api/v1/namespaces/ops/services', {
          metadata: { name: 'web' },
          spec: { ports: [{ port: 80 }] },
        })
      ).status,
      201,
    );
    assert.equal(
      (
        await call('POST', '/apis/policy/v1/namespaces/ops/poddisruptionbudgets', {
          metadata: { name: 'web' },
          spec: { maxUnavailable: 1 },
        })
      ).status,
      201,
    );
  });

  // docs/concepts/architecture/leases/ (Lease PUT may create; updates need a resourceVersion)
  test('Lease PUT creates when missing', async () => {
    const r = await call('PUT', '/apis/coordination.k8s.io/v1/namespaces/ops/leases/leader', {
      metadata: { name: 'leader' },
      spec: { holderIdentity: 'a' },
    });
    assert.equal(r.status, 201);
  });

  // CRD docs #delete-a-customresourcedefinition
  test('a new CRD is served at once; deleting it removes the resource and its objects', async () => {
    const crd = parse(readFileSync(CRD_FILE, 'utf8'));
    crd.metadata.name = 'widgets.example.org';
    crd.spec.group = 'example.org';
    crd.spec.names = { plural: 'widgets', singular: 'widget', kind: 'Widget' };
    assert.equal(
      (await call('POST', '/apis/apiextensions.k8s.io/v1/customresourcedefinitions', crd)).status,
      201,
    );
    const w = '/apis/example.org/v1alpha1/namespaces/ops/widgets';
    assert.equal(
      (
        await call('POST', w, {
          ...backupJob('w1'),
          apiVersion: 'example.org/v1alpha1',
          kind: 'Widget',
        })
      ).status,
      201,
    );
    const got = await call(
      'GET',
      '/apis/apiextensions.k8s.io/v1/customresourcedefinitions/widgets.example.org',
    );
    assert.ok(
      got.json.status.conditions.some(
        (c: { type: string; status: string }) => c.type === 'Established' && c.status === 'True',
      ),
    );
    assert.equal(
      (
        await call(
          'DELETE',
          '/apis/apiextensions.k8s.io/v1/customresourcedefinitions/widgets.example.org',
        )
      ).status,
      200,
    );
    assert.equal((await call('GET', w)).status, 404);
    assert.equal(emu.core.store.count('example.org/widgets'), 0);
  });
});
