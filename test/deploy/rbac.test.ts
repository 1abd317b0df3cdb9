import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { parseAllDocuments } from 'yaml';
import { COMPONENTS, type Component, CONFIG_NAMESPACE, policyRules, type PolicyRule } from '#rbac';
import { CHART, NAMESPACE, findObject, renderChart, type KubeObject } from './support/helm.js';

type Role = KubeObject & { rules: PolicyRule[] };
type Binding = KubeObject & {
  roleRef: { kind: string; name: string };
  subjects: { kind: string; name: string; namespace: string }[];
};

const rules = (
  objects: KubeObject[],
  kind: string,
  name: string,
  namespace?: string,
): PolicyRule[] => {
  const role = objects.find(
    (o) =>
      o.kind === kind &&
      o.metadata.name === name &&
      (namespace === undefined || o.metadata.namespace === namespace),
  ) as Role | undefined;
  assert.ok(role, `${kind} ${namespace ?? ''}/${name} rendered`);
  return role.rules;
};

/** The rule list, or undefined when permissions.ts gives the component none in that scope. */
const expected = (component: Component, scope: 'cluster' | 'leaderElectionNamespace') => {
  const list = policyRules(component, scope);
  return list.length > 0 ? list : undefined;
};

describe('the RBAC everyone deploys is exactly what libs/rbac/src/permissions.ts says', () => {
  test('config/rbac', () => {
    for (const component of COMPONENTS) {
      const objects = parseAllDocuments(readFileSync(`config/rbac/${component}.yaml`, 'utf8')).map(
        (d) => d.toJS() as KubeObject,
      );
      const name = `backupjob-operator-${component}`;
      assert.deepEqual(rules(objects, 'ClusterRole', name), policyRules(component, 'cluster'));
      const lease = expected(component, 'leaderElectionNamespace');
      if (lease)
        assert.deepEqual(
          rules(objects, 'Role', `${name}-leader-election`, CONFIG_NAMESPACE),
          lease,
        );
      else
        assert.ok(
          !objects.some((o) => o.kind === 'Role'),
          `${component} has no leader-election Role`,
        );
      for (const binding of objects.filter((o) => o.kind.endsWith('Binding')) as Binding[]) {
        assert.deepEqual(binding.subjects, [
          { kind: 'ServiceAccount', name, namespace: CONFIG_NAMESPACE },
        ]);
      }
    }
  });

  test('the chart, cluster-wide', () => {
    const objects = renderChart();
    for (const component of COMPONENTS) {
      const name = `backup-operator-${component}`;
      assert.deepEqual(rules(objects, 'ClusterRole', name), policyRules(component, 'cluster'));
      const binding = findObject(objects, 'ClusterRoleBinding', name) as Binding;
      assert.deepEqual(binding.roleRef, {
        apiGroup: 'rbac.authorization.k8s.io',
        kind: 'ClusterRole',
        name,
      });
      assert.deepEqual(binding.subjects, [{ kind: 'ServiceAccount', name, namespace: NAMESPACE }]);
      const lease = expected(component, 'leaderElectionNamespace');
      const leaseRole = objects.find(
        (o) => o.kind === 'Role' && o.metadata.name === `${name}-leader-election`,
      ) as Role | undefined;
      assert.deepEqual(leaseRole?.rules, lease);
      if (leaseRole) assert.equal(leaseRole.metadata.namespace, NAMESPACE);
    }
    // Besides permissions.ts' roles, only the secure-metrics pair (metrics.secure, the default).
    assert.deepEqual(rules(objects, 'ClusterRole', 'backup-operator-metrics-auth'), [
      { apiGroups: ['authentication.k8s.io'], resources: ['tokenreviews'], verbs: ['create'] },
      {
        apiGroups: ['authorization.k8s.io'],
        resources: ['subjectaccessreviews'],
        verbs: ['create'],
      },
    ]);
    assert.deepEqual(rules(objects, 'ClusterRole', 'backup-operator-metrics-reader'), [
      { nonResourceURLs: ['/metrics'], verbs: ['get'] },
    ]);
    assert.equal(objects.filter((o) => o.kind === 'ClusterRole').length, COMPONENTS.length + 2);
    const plain = renderChart([], ['metrics.secure=false']);
    assert.equal(plain.filter((o) => o.kind === 'ClusterRole').length, COMPONENTS.length);
  });

  test('the chart, limited to watched namespaces', () => {
    const objects = renderChart([`${CHART}/ci/namespaced-values.yaml`]);
    for (const component of COMPONENTS) {
      const name = `backup-operator-${component}`;
      for (const namespace of ['ops', 'databases']) {
        assert.deepEqual(
          rules(objects, 'Role', name, namespace),
          policyRules(component, 'cluster'),
        );
        const binding = objects.find(
          (o) =>
            o.kind === 'RoleBinding' &&
            o.metadata.name === name &&
            o.metadata.namespace === namespace,
        ) as Binding;
        assert.deepEqual(binding.subjects, [
          { kind: 'ServiceAccount', name, namespace: NAMESPACE },
        ]);
      }
    }
  });

  test('no rule grants access to Secrets or uses a wildcard', () => {
    const objects = renderChart();
    const all = objects
      .filter((o) => o.kind === 'Role' || o.kind === 'ClusterRole')
      .flatMap((o) => (o as Role).rules);
    assert.ok(all.length > 0);
    for (const rule of all) {
      const resources = rule.resources ?? [];
      assert.ok(!resources.some((r) => r === 'secrets' || r.includes('*')), JSON.stringify(rule));
      assert.ok(
        !rule.verbs.includes('*') && !(rule.apiGroups ?? []).includes('*'),
        JSON.stringify(rule),
      );
    }
  });
});
