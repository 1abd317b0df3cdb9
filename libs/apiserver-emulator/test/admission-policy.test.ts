import assert from 'node:assert/strict';
import { after, before, describe, test, type TestContext } from 'node:test';
import type { Emulator, KubeObject } from '../src/index.js';
import { http, withEmulator, type HttpResult } from './support.js';

// ValidatingAdmissionPolicy as kube-apiserver applies it
// (docs/reference/access-authn-authz/validating-admission-policy/, and the validating policy
// plugin in k8s.io/apiserver/pkg/admission/plugin/policy/validating): how policies and bindings
// are defaulted and validated, which requests they match, the CEL authorizer library,
// messageExpression, failurePolicy and the binding's validation actions. Requests are made over
// HTTP as the user `jane`, whom RBAC lets write ConfigMaps and Pods in `app` and nothing else.

const API = 'admissionregistration.k8s.io/v1';
const POLICIES = '/apis/admissionregistration.k8s.io/v1/validatingadmissionpolicies';
const BINDINGS = '/apis/admissionregistration.k8s.io/v1/validatingadmissionpolicybindings';
const CM = '/api/v1/namespaces/app/configmaps';
const JANE = { 'Impersonate-User': 'jane' };
const RBAC = 'rbac.authorization.k8s.io/v1';

let emu: Emulator;
let call: ReturnType<typeof http>;

function create(obj: Record<string, unknown>): KubeObject {
  return emu.objects.create(obj as KubeObject);
}

before(async () => {
  emu = await withEmulator({ namespaces: ['app', 'other'], rbac: true });
  call = http(emu);
  create({
    apiVersion: RBAC,
    kind: 'Role',
    metadata: { name: 'writer', namespace: 'app' },
    rules: [
      {
        apiGroups: [''],
        resources: ['configmaps', 'pods', 'pods/status'],
        verbs: ['create', 'update', 'patch', 'get', 'delete'],
      },
      { apiGroups: [''], resources: ['secrets'], resourceNames: ['mine'], verbs: ['get'] },
    ],
  });
  create({
    apiVersion: RBAC,
    kind: 'RoleBinding',
    metadata: { name: 'writer', namespace: 'app' },
    roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'writer' },
    subjects: [{ kind: 'User', name: 'jane' }],
  });
  create({
    apiVersion: RBAC,
    kind: 'ClusterRole',
    metadata: { name: 'health' },
    rules: [{ nonResourceURLs: ['/healthz'], verbs: ['get'] }],
  });
  create({
    apiVersion: RBAC,
    kind: 'ClusterRoleBinding',
    metadata: { name: 'health' },
    roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'health' },
    subjects: [{ kind: 'User', name: 'jane' }],
  });
  create({
    apiVersion: RBAC,
    kind: 'RoleBinding',
    metadata: { name: 'robot-reads-pods', namespace: 'app' },
    roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'writer' },
    subjects: [{ kind: 'ServiceAccount', name: 'robot', namespace: 'app' }],
  });
});

after(() => emu?.stop());

const configMapRules = [
  {
    apiGroups: [''],
    apiVersions: ['v1'],
    operations: ['CREATE', 'UPDATE'],
    resources: ['configmaps'],
  },
];

function denyAll(message = 'no'): Record<string, unknown> {
  return { validations: [{ expression: 'false', message }] };
}

/**
 * Installs a policy and a binding named `name` (in-process, as `kubectl apply` would store them)
 * for the rest of the test.
 */
function policy(
  t: TestContext,
  name: string,
  spec: Record<string, unknown>,
  binding: Record<string, unknown> = {},
): void {
  create({
    apiVersion: API,
    kind: 'ValidatingAdmissionPolicy',
    metadata: { name },
    spec: { matchConstraints: { resourceRules: configMapRules }, ...spec },
  });
  create({
    apiVersion: API,
    kind: 'ValidatingAdmissionPolicyBinding',
    metadata: { name },
    spec: { policyName: name, validationActions: ['Deny'], ...binding },
  });
  t.after(() => {
    emu.objects.delete(API, 'ValidatingAdmissionPolicyBinding', name);
    emu.objects.delete(API, 'ValidatingAdmissionPolicy', name);
  });
}

let counter = 0;
function configMap(data: Record<string, string> = {}, labels?: Record<string, string>) {
  return { metadata: { name: `cm-${++counter}`, labels }, data };
}

function message(res: HttpResult): string {
  return (res.json as { message?: string }).message ?? '';
}

describe('policies and bindings are defaulted and validated when written', () => {
  test('defaults: failurePolicy Fail, matchPolicy Equivalent, empty selectors, rule scope *', async () => {
    const res = await call('POST', POLICIES, {
      apiVersion: API,
      kind: 'ValidatingAdmissionPolicy',
      metadata: { name: 'defaults' },
      spec: { matchConstraints: { resourceRules: configMapRules }, ...denyAll() },
    });
    assert.equal(res.status, 201, res.text);
    const spec = res.json.spec;
    assert.equal(spec.failurePolicy, 'Fail');
    assert.equal(spec.matchConstraints.matchPolicy, 'Equivalent');
    assert.deepEqual(spec.matchConstraints.namespaceSelector, {});
    assert.deepEqual(spec.matchConstraints.objectSelector, {});
    assert.equal(spec.matchConstraints.resourceRules[0].scope, '*');
    emu.objects.delete(API, 'ValidatingAdmissionPolicy', 'defaults');
  });

  const invalidPolicies: [string, Record<string, unknown>, RegExp][] = [
    [
      'an expression that does not parse',
      { validations: [{ expression: 'object.data ==' }] },
      /spec\.validations\[0\]\.expression: Invalid value: "object\.data ==": compilation failed/,
    ],
    [
      'a name CEL does not know',
      { validations: [{ expression: 'self.x == 1' }] },
      /spec\.validations\[0\]\.expression: .*compilation failed: Unknown variable: self/,
    ],
    [
      'an authorizer chain the library does not allow (a namespace without a resource)',
      {
        validations: [
          { expression: "authorizer.group('').namespace('app').check('get').allowed()" },
        ],
      },
      /spec\.validations\[0\]\.expression: .*compilation failed: .*GroupCheck\.namespace/,
    ],
    [
      'an expression that is not a bool',
      { validations: [{ expression: "'yes'" }] },
      /spec\.validations\[0\]\.expression: .*must evaluate to bool/,
    ],
    [
      'the authorizer in a messageExpression (it has none there)',
      {
        validations: [
          {
            expression: 'false',
            messageExpression: "authorizer.path('/healthz').check('get').reason()",
          },
        ],
      },
      /spec\.validations\[0\]\.messageExpression: .*Unknown variable: authorizer/,
    ],
    [
      'a message with a line break',
      { validations: [{ expression: 'false', message: 'two\nlines' }] },
      /spec\.validations\[0\]\.message: Invalid value: .*must not contain line breaks/,
    ],
    [
      'a reason the API does not know',
      { validations: [{ expression: 'false', reason: 'Teapot' }] },
      /spec\.validations\[0\]\.reason: Unsupported value: "Teapot"/,
    ],
    [
      'a variable that is not a CEL identifier',
      { variables: [{ name: 'a-b', expression: '1' }], ...denyAll() },
      /spec\.variables\[0\]\.name: Invalid value: "a-b": name is not a valid CEL identifier/,
    ],
    [
      'neither validations nor auditAnnotations',
      {},
      /spec\.validations: Required value: validations or auditAnnotations must contain at least one item/,
    ],
    [
      'no resourceRules',
      { matchConstraints: { namespaceSelector: {} }, ...denyAll() },
      /spec\.matchConstraints\.resourceRules: Required value/,
    ],
    [
      'an operation that does not exist',
      {
        matchConstraints: {
          resourceRules: [{ ...configMapRules[0], operations: ['READ'] }],
        },
        ...denyAll(),
      },
      /spec\.matchConstraints\.resourceRules\[0\]\.operations\[0\]: Unsupported value: "READ"/,
    ],
    [
      'an unknown failurePolicy',
      { failurePolicy: 'Sometimes', ...denyAll() },
      /spec\.failurePolicy: Unsupported value: "Sometimes"/,
    ],
  ];
  for (const [what, spec, expected] of invalidPolicies) {
    test(`a policy with ${what} is rejected with 422`, async () => {
      const res = await call('POST', POLICIES, {
        apiVersion: API,
        kind: 'ValidatingAdmissionPolicy',
        metadata: { name: 'bad' },
        spec: { matchConstraints: { resourceRules: configMapRules }, ...spec },
      });
      assert.equal(res.status, 422, res.text);
      assert.match(
        message(res),
        /^ValidatingAdmissionPolicy\.admissionregistration\.k8s\.io "bad" is invalid: /,
      );
      assert.match(message(res), expected);
    });
  }

  for (const [what, actions, expected] of [
    ['no action', [], /spec\.validationActions: Required value/],
    ['Deny and Warn together', ['Deny', 'Warn'], /must not contain both Deny and Warn/],
    ['an unknown action', ['Block'], /spec\.validationActions\[0\]: Unsupported value: "Block"/],
  ] as const) {
    test(`a binding with ${what} is rejected with 422`, async () => {
      const res = await call('POST', BINDINGS, {
        apiVersion: API,
        kind: 'ValidatingAdmissionPolicyBinding',
        metadata: { name: 'bad' },
        spec: { policyName: 'x', validationActions: actions },
      });
      assert.equal(res.status, 422, res.text);
      assert.match(message(res), expected);
    });
  }
});

describe('match constraints', () => {
  test('operations: a CREATE-only policy does not judge updates', async (t) => {
    policy(t, 'create-only', {
      matchConstraints: { resourceRules: [{ ...configMapRules[0], operations: ['CREATE'] }] },
      validations: [{ expression: '!has(object.data.bad)', message: 'bad' }],
    });
    assert.equal((await call('POST', CM, configMap({ bad: 'x' }), JANE)).status, 422);
    const ok = await call('POST', CM, configMap(), JANE);
    assert.equal(ok.status, 201);
    const updated = { ...ok.json, data: { bad: 'x' } };
    assert.equal((await call('PUT', `${CM}/${ok.json.metadata.name}`, updated, JANE)).status, 200);
  });

  test('DELETE is judged with the stored object as oldObject and a null object', async (t) => {
    const keep = await call('POST', CM, configMap({ keep: 'yes' }), JANE);
    policy(t, 'keep', {
      matchConstraints: {
        resourceRules: [{ ...configMapRules[0], operations: ['DELETE'] }],
      },
      validations: [
        {
          expression: "object == null && !(has(oldObject.data) && 'keep' in oldObject.data)",
          messageExpression: "'may not delete ' + oldObject.metadata.name",
          reason: 'Forbidden',
        },
      ],
    });
    const name = keep.json.metadata.name as string;
    const res = await call('DELETE', `${CM}/${name}`, undefined, JANE);
    assert.equal(res.status, 403, res.text);
    assert.match(message(res), new RegExp(`denied request: may not delete ${name}$`));
    assert.ok(emu.objects.get('v1', 'ConfigMap', name, 'app'));
    const other = await call('POST', CM, configMap(), JANE);
    const gone = await call('DELETE', `${CM}/${other.json.metadata.name}`, undefined, JANE);
    assert.equal(gone.status, 200, gone.text);
  });

  test('resourceNames: only the named objects', async (t) => {
    policy(t, 'named', {
      matchConstraints: { resourceRules: [{ ...configMapRules[0], resourceNames: ['locked'] }] },
      ...denyAll('locked'),
    });
    assert.equal((await call('POST', CM, { metadata: { name: 'locked' } }, JANE)).status, 422);
    assert.equal((await call('POST', CM, configMap(), JANE)).status, 201);
  });

  test('resources: `pods` does not match pods/status, `pods/status` only that, `*/*` both', async (t) => {
    const PODS = '/api/v1/namespaces/app/pods';
    const pod = await call('POST', PODS, {
      metadata: { name: 'p' },
      spec: { containers: [{ name: 'c', image: 'x' }] },
    });
    assert.equal(pod.status, 201, pod.text);
    const status = (phase: string) =>
      call(
        'PATCH',
        `${PODS}/p/status`,
        { status: { phase } },
        { ...JANE, 'Content-Type': 'application/merge-patch+json' },
      );
    const rule = { apiGroups: [''], apiVersions: ['v1'], operations: ['UPDATE'] };
    for (const [resources, judged] of [
      [['pods'], false],
      [['pods/status'], true],
      [['*/*'], true],
      [['*'], false],
    ] as const) {
      await t.test(JSON.stringify(resources), async (t) => {
        policy(t, 'pod-status', {
          matchConstraints: { resourceRules: [{ ...rule, resources }] },
          validations: [{ expression: "request.subResource != 'status'", message: 'status' }],
        });
        assert.equal((await status(`P${++counter}`)).status, judged ? 422 : 200);
      });
    }
  });

  test('scope: Namespaced judges namespaced objects only, Cluster cluster-scoped ones only', async (t) => {
    const rule = {
      apiGroups: ['', 'rbac.authorization.k8s.io'],
      apiVersions: ['v1'],
      operations: ['CREATE'],
      resources: ['configmaps', 'clusterroles'],
    };
    policy(t, 'namespaced', {
      matchConstraints: { resourceRules: [{ ...rule, scope: 'Namespaced' }] },
      ...denyAll('namespaced'),
    });
    policy(t, 'cluster', {
      matchConstraints: { resourceRules: [{ ...rule, scope: 'Cluster' }] },
      ...denyAll('cluster'),
    });
    const role = { apiVersion: RBAC, kind: 'ClusterRole', metadata: { name: 'x' } };
    const res = await call('POST', '/apis/rbac.authorization.k8s.io/v1/clusterroles', role);
    assert.match(message(res), /'cluster' denied request: cluster$/);
    assert.match(message(await call('POST', CM, configMap(), JANE)), /'namespaced' denied request/);
  });

  test('excludeResourceRules take precedence over resourceRules', async (t) => {
    policy(t, 'excluded', {
      matchConstraints: {
        resourceRules: configMapRules,
        excludeResourceRules: [{ ...configMapRules[0], resourceNames: ['exempt'] }],
      },
      ...denyAll(),
    });
    assert.equal((await call('POST', CM, { metadata: { name: 'exempt' } }, JANE)).status, 201);
    assert.equal((await call('POST', CM, configMap(), JANE)).status, 422);
  });

  test('namespaceSelector reads the namespace labels; objectSelector the object or old object', async (t) => {
    emu.objects.patch('v1', 'Namespace', 'other', '', { metadata: { labels: { tier: 'prod' } } });
    policy(t, 'prod-only', {
      matchConstraints: {
        resourceRules: configMapRules,
        namespaceSelector: { matchLabels: { tier: 'prod' } },
      },
      ...denyAll('prod'),
    });
    policy(t, 'labelled-only', {
      matchConstraints: {
        resourceRules: configMapRules,
        objectSelector: { matchExpressions: [{ key: 'guarded', operator: 'Exists' }] },
      },
      ...denyAll('guarded'),
    });
    const other = '/api/v1/namespaces/other/configmaps';
    assert.match(message(await call('POST', other, configMap())), /prod$/);
    assert.equal((await call('POST', CM, configMap(), JANE)).status, 201);
    const res = await call('POST', CM, configMap({}, { guarded: '1' }), JANE);
    assert.match(message(res), /guarded$/);
    // Removing the label is judged too: the old object still carries it.
    emu.objects.create({
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'was-guarded', namespace: 'app', labels: { guarded: '1' } },
    } as KubeObject);
    const current = emu.objects.get('v1', 'ConfigMap', 'was-guarded', 'app')!;
    const unlabel = { ...current, metadata: { ...current.metadata, labels: {} } };
    assert.equal((await call('PUT', `${CM}/was-guarded`, unlabel, JANE)).status, 422);
  });

  test("a binding's matchResources narrows the policy; a binding without a policy does nothing", async (t) => {
    emu.objects.patch('v1', 'Namespace', 'other', '', { metadata: { labels: { tier: 'prod' } } });
    policy(t, 'narrowed', denyAll('narrowed'), {
      matchResources: { namespaceSelector: { matchLabels: { tier: 'prod' } } },
    });
    assert.equal((await call('POST', CM, configMap(), JANE)).status, 201);
    const other = '/api/v1/namespaces/other/configmaps';
    assert.equal((await call('POST', other, configMap())).status, 422);
    create({
      apiVersion: API,
      kind: 'ValidatingAdmissionPolicyBinding',
      metadata: { name: 'orphan' },
      spec: { policyName: 'does-not-exist', validationActions: ['Deny'] },
    });
    t.after(() => emu.objects.delete(API, 'ValidatingAdmissionPolicyBinding', 'orphan'));
    assert.equal((await call('POST', CM, configMap(), JANE)).status, 201);
  });

  test('matchConditions: a false one skips the policy; an error follows failurePolicy', async (t) => {
    const conditions = (expression: string) => [
      { name: 'has-data', expression: 'has(object.data)' },
      { name: 'second', expression },
    ];
    policy(t, 'conditional', {
      matchConditions: conditions("object.data.check == 'yes'"),
      ...denyAll('checked'),
    });
    assert.equal((await call('POST', CM, { metadata: { name: 'no-data' } }, JANE)).status, 201);
    assert.match(message(await call('POST', CM, configMap({ check: 'yes' }), JANE)), /checked$/);
    assert.equal((await call('POST', CM, configMap({ check: 'no' }), JANE)).status, 201);
    const failing = await call('POST', CM, configMap({ other: 'x' }), JANE);
    assert.equal(failing.status, 422);
    assert.match(message(failing), /expression 'object\.data\.check == 'yes'' resulted in error/);
  });

  test('policies never judge policies or bindings', async (t) => {
    const all = { apiGroups: ['*'], apiVersions: ['*'], operations: ['*'], resources: ['*'] };
    policy(t, 'everything', { matchConstraints: { resourceRules: [all] }, ...denyAll() });
    const res = await call('POST', POLICIES, {
      apiVersion: API,
      kind: 'ValidatingAdmissionPolicy',
      metadata: { name: 'still-possible' },
      spec: {
        matchConstraints: { resourceRules: configMapRules },
        validations: [{ expression: 'true' }],
      },
    });
    assert.equal(res.status, 201, res.text);
    emu.objects.delete(API, 'ValidatingAdmissionPolicy', 'still-possible');
  });

  test('matchPolicy Equivalent also matches another served version; Exact does not', async (t) => {
    create({
      apiVersion: 'apiextensions.k8s.io/v1',
      kind: 'CustomResourceDefinition',
      metadata: { name: 'widgets.example.com' },
      spec: {
        group: 'example.com',
        scope: 'Namespaced',
        names: { plural: 'widgets', singular: 'widget', kind: 'Widget' },
        versions: ['v1', 'v2'].map((name) => ({
          name,
          served: true,
          storage: name === 'v1',
          schema: {
            openAPIV3Schema: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true },
          },
        })),
      },
    });
    const v1Rule = {
      apiGroups: ['example.com'],
      apiVersions: ['v1'],
      operations: ['CREATE'],
      resources: ['widgets'],
    };
    const validations = [
      {
        expression: 'false',
        messageExpression:
          "'as ' + request.kind.version + ' from ' + request.requestKind.version + ', object ' + object.apiVersion",
      },
    ];
    const widget = (name: string) => ({
      apiVersion: 'example.com/v2',
      kind: 'Widget',
      metadata: { name },
    });
    const v2 = '/apis/example.com/v2/namespaces/app/widgets';
    policy(t, 'exact', {
      matchConstraints: { resourceRules: [v1Rule], matchPolicy: 'Exact' },
      ...denyAll('exact'),
    });
    assert.equal((await call('POST', v2, widget('w1'))).status, 201, 'Exact: v2 is not v1');
    policy(t, 'equivalent', { matchConstraints: { resourceRules: [v1Rule] }, validations });
    const res = await call('POST', v2, widget('w2'));
    assert.equal(res.status, 422, res.text);
    assert.match(message(res), /'equivalent'.*as v1 from v2, object example\.com\/v1$/);
  });
});

describe('the authorizer library asks about the requesting user', () => {
  function check(t: TestContext, name: string, expression: string): void {
    policy(t, name, {
      validations: [
        {
          expression: `!has(object.data) || !('probe' in object.data) || (${expression})`,
          message: 'check failed',
        },
      ],
    });
  }
  const probe = () => configMap({ probe: '1' });

  const cases: [string, string, boolean][] = [
    [
      'a resource in a namespace',
      "authorizer.group('').resource('pods').namespace('app').check('create').allowed()",
      true,
    ],
    [
      'the same in another namespace',
      "authorizer.group('').resource('pods').namespace('other').check('create').allowed()",
      false,
    ],
    [
      'a named object',
      "authorizer.group('').resource('secrets').namespace('app').name('mine').check('get').allowed()",
      true,
    ],
    [
      'another name',
      "authorizer.group('').resource('secrets').namespace('app').name('theirs').check('get').allowed()",
      false,
    ],
    [
      'a subresource',
      "authorizer.group('').resource('pods').subresource('status').namespace('app').check('update').allowed()",
      true,
    ],
    ['a non-resource path', "authorizer.path('/healthz').check('get').allowed()", true],
    ['another path', "authorizer.path('/metrics').check('get').allowed()", false],
    [
      'requestResource, preset with the request',
      "authorizer.requestResource.check('create').allowed()",
      true,
    ],
    [
      'requestResource, another verb',
      "authorizer.requestResource.check('deletecollection').allowed()",
      false,
    ],
    [
      'a ServiceAccount instead of the user',
      "authorizer.serviceAccount('app', 'robot').group('').resource('pods').namespace('app').check('create').allowed()",
      true,
    ],
    [
      'a ServiceAccount without the grant',
      "authorizer.serviceAccount('app', 'nobody').group('').resource('pods').namespace('app').check('create').allowed()",
      false,
    ],
    [
      'the reason RBAC gives',
      "authorizer.group('').resource('pods').namespace('app').check('create').reason().startsWith('RBAC: allowed by RoleBinding \"writer/app\"')",
      true,
    ],
    [
      'a decision without error',
      "!authorizer.path('/healthz').check('get').errored() && authorizer.path('/healthz').check('get').error() == ''",
      true,
    ],
  ];
  for (const [what, expression, allowed] of cases) {
    test(`${what}: ${allowed ? 'allowed' : 'not allowed'}`, async (t) => {
      check(t, 'authz', expression);
      assert.equal((await call('POST', CM, probe(), JANE)).status, allowed ? 201 : 422);
    });
  }

  test('an empty path is an evaluation error, handled by failurePolicy', async (t) => {
    check(t, 'empty-path', "authorizer.path('').check('get').allowed()");
    const res = await call('POST', CM, probe(), JANE);
    assert.equal(res.status, 422);
    assert.match(message(res), /resulted in error: path must not be empty/);
  });

  test('a malformed ServiceAccount name is an evaluation error', async (t) => {
    check(
      t,
      'bad-sa',
      "authorizer.serviceAccount('app', 'No_Such').path('/healthz').check('get').allowed()",
    );
    assert.match(message(await call('POST', CM, probe(), JANE)), /Invalid service account name/);
  });
});

describe('messageExpression and the answer a denial gets', () => {
  const cases: [string, Record<string, unknown>, string][] = [
    [
      'a messageExpression that evaluates to a string',
      { messageExpression: "'jane said ' + object.data.say", message: 'static' },
      'jane said hi',
    ],
    [
      'one that fails: the message',
      { messageExpression: 'object.data.nothing', message: 'static' },
      'static',
    ],
    ['one that is blank: the message', { messageExpression: "'   '", message: 'static' }, 'static'],
    [
      'one with a line break: the message',
      { messageExpression: "'a\\nb'", message: 'static' },
      'static',
    ],
    [
      'one over 5 KiB: the message',
      { messageExpression: 'object.data.long', message: 'static' },
      'static',
    ],
    [
      'one that is not a string: the message',
      { messageExpression: 'object.data', message: 'static' },
      'static',
    ],
    ['surrounding blanks are trimmed', { messageExpression: "'  padded  '" }, 'padded'],
    ['no message either: the expression', {}, 'failed expression: false'],
  ];
  for (const [what, fields, expected] of cases) {
    test(`${what}`, async (t) => {
      policy(t, 'message', { validations: [{ expression: 'false', ...fields }] });
      const res = await call('POST', CM, configMap({ say: 'hi', long: 'x'.repeat(5121) }), JANE);
      assert.equal(message(res).split('denied request: ')[1], expected, message(res));
    });
  }

  for (const [reason, code] of [
    ['Forbidden', 403],
    ['Unauthorized', 401],
    ['RequestEntityTooLarge', 413],
    ['Invalid', 422],
    [undefined, 422],
  ] as const) {
    test(`reason ${reason ?? '(none)'}: code ${code}, the message as admission.NewForbidden words it`, async (t) => {
      policy(t, 'reasons', { validations: [{ expression: 'false', message: 'nope', reason }] });
      const cm = configMap();
      const res = await call('POST', CM, cm, JANE);
      assert.equal(res.status, code);
      const status = res.json as {
        reason: string;
        message: string;
        details: Record<string, unknown>;
      };
      assert.equal(status.reason, reason ?? 'Invalid');
      const expected = `ValidatingAdmissionPolicy 'reasons' with binding 'reasons' denied request: nope`;
      assert.equal(status.message, `configmaps "${cm.metadata.name}" is forbidden: ${expected}`);
      assert.deepEqual(status.details, {
        name: cm.metadata.name,
        kind: 'configmaps',
        causes: [{ message: expected }],
      });
    });
  }
});

describe('failurePolicy and evaluation errors', () => {
  const erroring = { expression: "object.data.missing == 'x'", message: 'never shown' };
  const failing = { expression: '!has(object.data.forbidden)', message: 'forbidden key' };

  test('Fail (the default): an error rejects with 422 and the error', async (t) => {
    policy(t, 'fail', { validations: [erroring] });
    const res = await call('POST', CM, configMap(), JANE);
    assert.equal(res.status, 422);
    assert.equal((res.json as { reason: string }).reason, 'Invalid');
    assert.match(
      message(res),
      /'fail' denied request: expression 'object\.data\.missing == 'x'' resulted in error: No such key: missing$/,
    );
  });

  test('Ignore: an erroring validation is skipped, the others still count', async (t) => {
    policy(t, 'ignore', { failurePolicy: 'Ignore', validations: [erroring, failing] });
    assert.equal((await call('POST', CM, configMap(), JANE)).status, 201);
    assert.match(
      message(await call('POST', CM, configMap({ forbidden: '1' }), JANE)),
      /forbidden key$/,
    );
  });

  test('variables are evaluated when used: one that fails breaks only what reads it', async (t) => {
    policy(t, 'vars', {
      variables: [
        { name: 'broken', expression: 'object.data.missing' },
        { name: 'size', expression: 'size(object.data)' },
      ],
      validations: [{ expression: 'variables.size < 2', message: 'too big' }],
    });
    assert.equal((await call('POST', CM, configMap({ a: '1' }), JANE)).status, 201);
    assert.match(message(await call('POST', CM, configMap({ a: '1', b: '2' }), JANE)), /too big$/);
  });

  test('a variable that fails where it is read: the error names the reading expression', async (t) => {
    policy(t, 'var-error', {
      variables: [{ name: 'broken', expression: 'object.data.missing' }],
      validations: [{ expression: "variables.broken == 'x'" }],
    });
    const res = await call('POST', CM, configMap(), JANE);
    assert.match(
      message(res),
      /denied request: expression 'variables\.broken == 'x'' resulted in error: No such key: missing$/,
    );
  });
});

describe('validation actions and several policies', () => {
  test('Warn: admitted, with a Warning header', async (t) => {
    policy(t, 'warn', denyAll('careful'), { validationActions: ['Warn'] });
    const res = await call('POST', CM, configMap(), JANE);
    assert.equal(res.status, 201);
    assert.equal(
      res.headers.get('warning'),
      `299 - "Validation failed for ValidatingAdmissionPolicy 'warn' with binding 'warn': careful"`,
    );
  });

  test('Audit alone: admitted without a warning', async (t) => {
    policy(t, 'audit', denyAll('recorded'), { validationActions: ['Audit'] });
    const res = await call('POST', CM, configMap(), JANE);
    assert.equal(res.status, 201);
    assert.equal(res.headers.get('warning'), null);
  });

  test('every policy is evaluated; the first denial answers, a warning from another still arrives', async (t) => {
    policy(t, 'a-first', denyAll('first'));
    policy(t, 'b-second', denyAll('second'));
    policy(t, 'c-warn', denyAll('third'), { validationActions: ['Warn'] });
    const res = await call('POST', CM, configMap(), JANE);
    assert.match(message(res), /'a-first' denied request: first$/);
    assert.match(res.headers.get('warning') ?? '', /'c-warn' with binding 'c-warn': third/);
  });

  test('writes made in-process are not judged', (t) => {
    policy(t, 'in-process', denyAll());
    assert.ok(
      create({
        apiVersion: 'v1',
        kind: 'ConfigMap',
        metadata: { name: 'direct', namespace: 'app' },
      }),
    );
  });
});
