import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { parse } from 'yaml';
import { COMPONENTS, SCOPES, permissions, type PermissionRule } from '../src/permissions.js';
import { chartRulesFile, configRbacFile, policyRules, rulesYaml } from '../src/render.js';

const rule = (over: Partial<PermissionRule>): PermissionRule => ({
  apiGroups: ['batch'],
  resources: ['jobs'],
  verbs: ['get'],
  scope: 'cluster',
  why: 'a test',
  ...over,
});

describe('RBAC rendering', () => {
  test('policyRules keeps only the rules of the scope asked for, without scope and why', () => {
    const source = {
      watcher: [
        rule({ verbs: ['list'] }),
        rule({ resources: ['leases'], scope: 'leaderElectionNamespace' }),
      ],
      worker: [],
    };
    assert.deepEqual(policyRules('watcher', 'cluster', source), [
      { apiGroups: ['batch'], resources: ['jobs'], verbs: ['list'] },
    ]);
    assert.deepEqual(policyRules('watcher', 'leaderElectionNamespace', source), [
      { apiGroups: ['batch'], resources: ['leases'], verbs: ['get'] },
    ]);
    assert.deepEqual(policyRules('worker', 'cluster', source), []);
  });

  test('rulesYaml is YAML of the same rules, each with its reason as a comment', () => {
    const rules = [
      rule({ apiGroups: [''], why: 'core group' }),
      rule({ verbs: ['create', 'patch'] }),
    ];
    const text = rulesYaml(rules);
    assert.match(text, /^# core group\n- apiGroups: \[""\]/);
    assert.deepEqual(
      parse(text),
      policyRules('watcher', 'cluster', { watcher: rules, worker: [] }),
    );
    assert.equal(rulesYaml([]), '[]');
  });

  test('the chart gets a named template for every component and scope', () => {
    const { content } = chartRulesFile();
    for (const component of COMPONENTS) {
      for (const scope of SCOPES) {
        const define = new RegExp(
          `{{- define "backupjob-operator\\.rules\\.${component}\\.${scope}" -}}\\n([^{]*)\\n{{- end }}`,
        );
        const body = define.exec(content)?.[1];
        assert.ok(body !== undefined, `${component}.${scope}`);
        assert.deepEqual(parse(body), policyRules(component, scope));
      }
    }
  });

  test('config/rbac leaves out the leader-election Role of a component that needs none', () => {
    const source = { watcher: [rule({})], worker: [rule({ scope: 'leaderElectionNamespace' })] };
    const kinds = (text: string) => [...text.matchAll(/^kind: (\w+)$/gm)].map((m) => m[1]);
    assert.deepEqual(kinds(configRbacFile('watcher', source).content), [
      'ServiceAccount',
      'ClusterRole',
      'ClusterRoleBinding',
    ]);
    assert.deepEqual(kinds(configRbacFile('worker', source).content), [
      'ServiceAccount',
      'Role',
      'RoleBinding',
    ]);
  });

  test('every permission says why it is needed and grants no Secret access', () => {
    for (const component of COMPONENTS) {
      for (const p of permissions[component]) {
        assert.ok(p.why.length > 10, JSON.stringify(p));
        assert.ok(!p.resources.includes('secrets'));
      }
    }
  });
});
