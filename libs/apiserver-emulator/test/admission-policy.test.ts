import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Emulator, KubeObject } from '../src/index.js';
import { http, withEmulator } from './support.js';

// ValidatingAdmissionPolicy (docs/reference/access-authn-authz/validating-admission-policy/):
// bound policies judge creates and updates of what they match, with the requesting user's RBAC.

const CM = '/api/v1/namespaces/app/configmaps';
const asUser = { 'Impersonate-User': 'jane' };

function policy(name: string, spec: Record<string, unknown>): KubeObject[] {
  const api = 'admissionregistration.k8s.io/v1';
  return [
    { apiVersion: api, kind: 'ValidatingAdmissionPolicy', metadata: { name }, spec },
    {
      apiVersion: api,
      kind: 'ValidatingAdmissionPolicyBinding',
      metadata: { name },
      spec: { policyName: name, validationActions: ['Deny'] },
    },
  ] as KubeObject[];
}

const configMaps = {
  resourceRules: [
    {
      apiGroups: [''],
      apiVersions: ['v1'],
      operations: ['CREATE', 'UPDATE'],
      resources: ['configmaps'],
    },
  ],
};

describe('ValidatingAdmissionPolicy', () => {
  let emu: Emulator;
  let call: ReturnType<typeof http>;
  before(async () => {
    emu = await withEmulator({ namespaces: ['app'], rbac: true });
    call = http(emu);
    emu.objects.create({
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'Role',
      metadata: { name: 'cm-writer', namespace: 'app' },
      rules: [{ apiGroups: [''], resources: ['configmaps'], verbs: ['create', 'update', 'get'] }],
    } as KubeObject);
    emu.objects.create({
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'RoleBinding',
      metadata: { name: 'cm-writer', namespace: 'app' },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'cm-writer' },
      subjects: [{ kind: 'User', name: 'jane' }],
    } as KubeObject);
    for (const doc of policy('owner-may-create-pods', {
      matchConstraints: configMaps,
      variables: [{ name: 'wants', expression: "has(object.data) && 'image' in object.data" }],
      validations: [
        {
          expression:
            "!variables.wants || authorizer.group('').resource('pods').namespace(request.namespace).check('create').allowed()",
          messageExpression: "request.userInfo.username + ' may not create pods'",
          reason: 'Forbidden',
        },
      ],
    }))
      emu.objects.create(doc);
  });
  after(() => emu.stop());

  test('a failing validation rejects with its message and reason, naming policy and binding', async () => {
    const res = await call('POST', CM, { metadata: { name: 'a' }, data: { image: 'x' } }, asUser);
    assert.equal(res.status, 403);
    const body = res.json as { reason: string; message: string };
    assert.equal(body.reason, 'Forbidden');
    assert.equal(
      body.message,
      `configmaps "a" is forbidden: ValidatingAdmissionPolicy 'owner-may-create-pods' with binding 'owner-may-create-pods' denied request: jane may not create pods`,
    );
  });

  test('a passing validation, and the same request by someone RBAC allows, are admitted', async () => {
    assert.equal(
      (await call('POST', CM, { metadata: { name: 'b' }, data: {} }, asUser)).status,
      201,
    );
    const admin = await call('POST', CM, { metadata: { name: 'c' }, data: { image: 'x' } });
    assert.equal(admin.status, 201);
  });

  test('updates are judged too; in-process writes and other resources are not', async () => {
    const current = emu.objects.get('v1', 'ConfigMap', 'b', 'app')!;
    const update = { ...current, data: { image: 'y' } };
    assert.equal((await call('PUT', `${CM}/b`, update, asUser)).status, 403);
    assert.ok(
      emu.objects.create({
        apiVersion: 'v1',
        kind: 'ConfigMap',
        metadata: { name: 'd', namespace: 'app' },
        data: { image: 'z' },
      } as KubeObject),
    );
  });

  test('an expression that fails to evaluate rejects under failurePolicy Fail, not Ignore', async () => {
    for (const [name, failurePolicy] of [
      ['broken-fail', 'Fail'],
      ['broken-ignore', 'Ignore'],
    ]) {
      for (const doc of policy(name!, {
        failurePolicy,
        matchConstraints: configMaps,
        validations: [{ expression: 'object.data.missing == "x"' }],
      }))
        emu.objects.create(doc);
    }
    const res = await call('POST', CM, { metadata: { name: 'e' }, data: {} }, asUser);
    assert.equal(res.status, 422);
    assert.match((res.json as { message: string }).message, /'broken-fail'.*resulted in error/);
    emu.objects.delete(
      'admissionregistration.k8s.io/v1',
      'ValidatingAdmissionPolicyBinding',
      'broken-fail',
    );
    assert.equal(
      (await call('POST', CM, { metadata: { name: 'e' }, data: {} }, asUser)).status,
      201,
    );
  });
});
