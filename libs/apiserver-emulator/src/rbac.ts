import type { Store } from './store.js';
import type { KubeObject, UserInfo } from './types.js';

/** What is asked: resource attributes (verb on group/resource/subresource/name in namespace) or a non-resource path. */
export interface Attributes {
  verb: string;
  group?: string;
  resource?: string;
  subresource?: string;
  namespace?: string;
  name?: string;
  path?: string;
}

export interface Decision {
  allowed: boolean;
  reason: string;
}

interface PolicyRule {
  verbs?: string[];
  apiGroups?: string[];
  resources?: string[];
  resourceNames?: string[];
  nonResourceURLs?: string[];
}

interface Subject {
  kind: string;
  name: string;
  namespace?: string;
}

interface Binding extends KubeObject {
  subjects?: Subject[];
  roleRef?: { kind: string; name: string };
}

/** What every authenticated user may do on a real cluster (system:basic-user, system:discovery, system:public-info-viewer). */
const AUTHENTICATED_RULES: PolicyRule[] = [
  {
    verbs: ['create'],
    apiGroups: ['authorization.k8s.io'],
    resources: ['selfsubjectaccessreviews', 'selfsubjectrulesreviews'],
  },
  { verbs: ['create'], apiGroups: ['authentication.k8s.io'], resources: ['selfsubjectreviews'] },
  {
    verbs: ['get'],
    nonResourceURLs: [
      '/api',
      '/api/*',
      '/apis',
      '/apis/*',
      '/healthz',
      '/livez',
      '/readyz',
      '/version',
      '/version/',
      '/openapi',
      '/openapi/*',
    ],
  },
];

function has(list: string[] | undefined, value: string): boolean {
  return !!list && (list.includes('*') || list.includes(value));
}

function ruleAllows(rule: PolicyRule, a: Attributes): boolean {
  if (!has(rule.verbs, a.verb)) return false;
  if (a.resource === undefined) {
    return (rule.nonResourceURLs ?? []).some(
      (u) =>
        u === '*' || u === a.path || (u.endsWith('*') && (a.path ?? '').startsWith(u.slice(0, -1))),
    );
  }
  if (!has(rule.apiGroups, a.group ?? '')) return false;
  const res = a.subresource ? `${a.resource}/${a.subresource}` : a.resource;
  const resources = rule.resources ?? [];
  const resOk =
    resources.includes('*') ||
    resources.includes(res) ||
    (a.subresource ? resources.includes(`*/${a.subresource}`) : false);
  if (!resOk) return false;
  return (
    !rule.resourceNames?.length || (a.name !== undefined && rule.resourceNames.includes(a.name))
  );
}

function subjectMatches(s: Subject, user: UserInfo, bindingNamespace: string): boolean {
  if (s.kind === 'User') return s.name === user.username;
  if (s.kind === 'Group') return user.groups.includes(s.name);
  if (s.kind === 'ServiceAccount')
    return user.username === `system:serviceaccount:${s.namespace ?? bindingNamespace}:${s.name}`;
  return false;
}

/**
 * RBAC evaluation (docs/reference/access-authn-authz/rbac/): ClusterRoleBindings grant
 * everywhere, RoleBindings in their namespace, to a Role or a ClusterRole. system:masters may do anything.
 */
export class RbacAuthorizer {
  constructor(private readonly store: Store) {}

  authorize(user: UserInfo, a: Attributes): Decision {
    if (user.groups.includes('system:masters')) return { allowed: true, reason: '' };
    if (
      user.groups.includes('system:authenticated') &&
      AUTHENTICATED_RULES.some((r) => ruleAllows(r, a))
    )
      return { allowed: true, reason: '' };
    for (const stored of this.store.list('rbac.authorization.k8s.io/clusterrolebindings')) {
      const b = stored.obj as Binding;
      if (!(b.subjects ?? []).some((s) => subjectMatches(s, user, ''))) continue;
      if (this.rulesOf(b.roleRef, '').some((r) => ruleAllows(r, a))) {
        return {
          allowed: true,
          reason: `RBAC: allowed by ClusterRoleBinding "${b.metadata.name}" of ClusterRole "${b.roleRef?.name}" to ${describe(user)}`,
        };
      }
    }
    if (a.namespace && a.resource !== undefined) {
      for (const stored of this.store.list('rbac.authorization.k8s.io/rolebindings', a.namespace)) {
        const b = stored.obj as Binding;
        if (!(b.subjects ?? []).some((s) => subjectMatches(s, user, a.namespace!))) continue;
        if (this.rulesOf(b.roleRef, a.namespace).some((r) => ruleAllows(r, a))) {
          return {
            allowed: true,
            reason: `RBAC: allowed by RoleBinding "${b.metadata.name}/${a.namespace}" of ${b.roleRef?.kind} "${b.roleRef?.name}" to ${describe(user)}`,
          };
        }
      }
    }
    return { allowed: false, reason: '' };
  }

  /** Rules a user has in a namespace (SelfSubjectRulesReview). */
  rulesFor(user: UserInfo, namespace: string): PolicyRule[] {
    if (user.groups.includes('system:masters'))
      return [
        { verbs: ['*'], apiGroups: ['*'], resources: ['*'] },
        { verbs: ['*'], nonResourceURLs: ['*'] },
      ];
    const rules = [...AUTHENTICATED_RULES];
    for (const stored of this.store.list('rbac.authorization.k8s.io/clusterrolebindings')) {
      const b = stored.obj as Binding;
      if ((b.subjects ?? []).some((s) => subjectMatches(s, user, '')))
        rules.push(...this.rulesOf(b.roleRef, ''));
    }
    for (const stored of this.store.list('rbac.authorization.k8s.io/rolebindings', namespace)) {
      const b = stored.obj as Binding;
      if ((b.subjects ?? []).some((s) => subjectMatches(s, user, namespace)))
        rules.push(...this.rulesOf(b.roleRef, namespace));
    }
    return rules;
  }

  private rulesOf(ref: Binding['roleRef'], namespace: string): PolicyRule[] {
    if (!ref) return [];
    const stored =
      ref.kind === 'ClusterRole'
        ? this.store.get('rbac.authorization.k8s.io/clusterroles', '', ref.name)
        : this.store.get('rbac.authorization.k8s.io/roles', namespace, ref.name);
    const role = stored?.obj as
      (KubeObject & { rules?: PolicyRule[]; aggregationRule?: unknown }) | undefined;
    return role?.rules ?? [];
  }
}

function describe(user: UserInfo): string {
  const sa = /^system:serviceaccount:/.test(user.username);
  return `${sa ? 'ServiceAccount' : 'User'} "${user.username}"`;
}

/** The message of a 403 (…is forbidden: User "u" cannot list resource "x" in API group "g" in the namespace "n"). */
export function forbiddenMessage(user: UserInfo, a: Attributes): string {
  if (a.resource === undefined) return `User "${user.username}" cannot ${a.verb} path "${a.path}"`;
  const res = a.subresource ? `${a.resource}/${a.subresource}` : a.resource;
  const scope = a.namespace ? ` in the namespace "${a.namespace}"` : ' at the cluster scope';
  return `User "${user.username}" cannot ${a.verb} resource "${res}" in API group "${a.group ?? ''}"${scope}`;
}
