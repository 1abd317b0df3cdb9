import type { Environment } from '@marcbachmann/cel-js';
import type { Attributes, Decision } from '../rbac.js';
import type { UserInfo } from '../types.js';

/**
 * Kubernetes' CEL authorizer library (k8s.io/apiserver/pkg/cel/library, "kubernetes.authz"): the
 * `authorizer` variable of ValidatingAdmissionPolicy expressions asks the authorizer about the
 * requesting user, or about a ServiceAccount named with serviceAccount(). The types are those of
 * the library, so a chain it does not allow (authorizer.group('').namespace('x')) fails to
 * compile, as it does on a real server.
 */

export type Authorize = (user: UserInfo, attributes: Attributes) => Decision;

export class AuthorizerValue {
  constructor(
    readonly user: UserInfo,
    readonly authorize: Authorize,
    /** `authorizer.requestResource`: a check preset with the request's resource, or undefined. */
    readonly requestResource?: ResourceCheckValue,
  ) {}
}

class PathCheckValue {
  constructor(
    readonly authorizer: AuthorizerValue,
    readonly path: string,
  ) {}
}

class GroupCheckValue {
  constructor(
    readonly authorizer: AuthorizerValue,
    readonly group: string,
  ) {}
}

type ResourceField = 'resource' | 'subresource' | 'namespace' | 'name';

export class ResourceCheckValue {
  constructor(
    readonly authorizer: AuthorizerValue,
    readonly attributes: Omit<Attributes, 'verb'>,
  ) {}

  with(field: ResourceField, value: string): ResourceCheckValue {
    return new ResourceCheckValue(this.authorizer, { ...this.attributes, [field]: value });
  }
}

class DecisionValue {
  constructor(
    readonly decision: Decision,
    readonly error = '',
  ) {}
}

/** RFC 1123 label (a namespace name) and subdomain (a ServiceAccount name), as apimachinery checks them. */
const DNS_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
const DNS_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;

/** The identity a ServiceAccount authenticates as (serviceaccount.ServiceAccountInfo.UserInfo). */
function serviceAccountUser(namespace: string, name: string): UserInfo {
  return {
    username: `system:serviceaccount:${namespace}:${name}`,
    groups: ['system:serviceaccounts', `system:serviceaccounts:${namespace}`],
  };
}

function decide(authorizer: AuthorizerValue, attributes: Attributes): DecisionValue {
  try {
    return new DecisionValue(authorizer.authorize(authorizer.user, attributes));
  } catch (err) {
    // An authorizer that fails answers "no opinion" with an error, which errored() reports.
    return new DecisionValue({ allowed: false, reason: '' }, (err as Error).message);
  }
}

/** Registers the library's types, the `authorizer` variable and its functions. */
export function withAuthorizerLibrary(env: Environment): Environment {
  return env
    .registerType('ResourceCheck', ResourceCheckValue)
    .registerType('Authorizer', {
      ctor: AuthorizerValue,
      fields: { requestResource: 'ResourceCheck' },
    })
    .registerType('PathCheck', PathCheckValue)
    .registerType('GroupCheck', GroupCheckValue)
    .registerType('Decision', DecisionValue)
    .registerVariable('authorizer', 'Authorizer')
    .registerFunction('Authorizer.path(string): PathCheck', (a: AuthorizerValue, path: string) => {
      if (path.trim() === '') throw new Error('path must not be empty');
      return new PathCheckValue(a, path);
    })
    .registerFunction(
      'Authorizer.group(string): GroupCheck',
      (a: AuthorizerValue, group: string) => new GroupCheckValue(a, group),
    )
    .registerFunction(
      'Authorizer.serviceAccount(string, string): Authorizer',
      (a: AuthorizerValue, namespace: string, name: string) => {
        if (!DNS_SUBDOMAIN.test(name) || name.length > 253) {
          throw new Error('Invalid service account name');
        }
        if (!DNS_LABEL.test(namespace) || namespace.length > 63) {
          throw new Error('Invalid service account namespace');
        }
        return new AuthorizerValue(serviceAccountUser(namespace, name), a.authorize);
      },
    )
    .registerFunction(
      'GroupCheck.resource(string): ResourceCheck',
      (g: GroupCheckValue, resource: string) => {
        if (resource.trim() === '') throw new Error('resource must not be empty');
        return new ResourceCheckValue(g.authorizer, { group: g.group, resource });
      },
    )
    .registerFunction(
      'ResourceCheck.subresource(string): ResourceCheck',
      (c: ResourceCheckValue, v: string) => c.with('subresource', v),
    )
    .registerFunction(
      'ResourceCheck.namespace(string): ResourceCheck',
      (c: ResourceCheckValue, v: string) => c.with('namespace', v),
    )
    .registerFunction(
      'ResourceCheck.name(string): ResourceCheck',
      (c: ResourceCheckValue, v: string) => c.with('name', v),
    )
    .registerFunction(
      // RBAC reads no selectors: they are accepted and change no answer, as on a real server.
      'ResourceCheck.fieldSelector(string): ResourceCheck',
      (c: ResourceCheckValue) => c,
    )
    .registerFunction(
      'ResourceCheck.labelSelector(string): ResourceCheck',
      (c: ResourceCheckValue) => c,
    )
    .registerFunction(
      'ResourceCheck.check(string): Decision',
      (c: ResourceCheckValue, verb: string) => decide(c.authorizer, { ...c.attributes, verb }),
    )
    .registerFunction('PathCheck.check(string): Decision', (c: PathCheckValue, verb: string) =>
      decide(c.authorizer, { path: c.path, verb }),
    )
    .registerFunction('Decision.allowed(): bool', (d: DecisionValue) => d.decision.allowed)
    .registerFunction('Decision.reason(): string', (d: DecisionValue) => d.decision.reason)
    .registerFunction('Decision.errored(): bool', (d: DecisionValue) => d.error !== '')
    .registerFunction('Decision.error(): string', (d: DecisionValue) => d.error);
}

/**
 * The `authorizer` value for one request: checks ask about `user`; `requestResource` is preset
 * with the request's group, resource, subresource, namespace and name.
 */
export function authorizerFor(
  user: UserInfo,
  authorize: Authorize,
  request: Omit<Attributes, 'verb'>,
): AuthorizerValue {
  const base = new AuthorizerValue(user, authorize);
  return new AuthorizerValue(user, authorize, new ResourceCheckValue(base, request));
}
