import { Environment } from '@marcbachmann/cel-js';
import type { Attributes, Decision } from '../rbac.js';

/** The question an `authorizer` chain builds up, and who answers it. */
class AuthorizerValue {
  constructor(readonly decide: (a: Attributes) => Decision) {}
}

class CheckValue {
  constructor(
    readonly decide: (a: Attributes) => Decision,
    readonly attributes: Omit<Attributes, 'verb'>,
  ) {}

  with(field: 'resource' | 'subresource' | 'namespace' | 'name', value: string): CheckValue {
    return new CheckValue(this.decide, { ...this.attributes, [field]: value });
  }
}

class DecisionValue {
  constructor(readonly decision: Decision) {}
}

/**
 * The CEL environment of ValidatingAdmissionPolicy expressions: object, oldObject, request,
 * params, namespaceObject and variables as dynamic values, plus Kubernetes' authorizer library
 * (`authorizer.group(g).resource(r).namespace(n).name(x).check(verb).allowed()`), which asks
 * RBAC about the requesting user.
 */
export const policyEnvironment = new Environment({ unlistedVariablesAreDyn: true })
  .registerType('Authorizer', AuthorizerValue)
  .registerType('ResourceCheck', CheckValue)
  .registerType('Decision', DecisionValue)
  .registerVariable('authorizer', 'Authorizer')
  .registerFunction(
    'Authorizer.group(string): ResourceCheck',
    (a: AuthorizerValue, group: string) => new CheckValue(a.decide, { group }),
  )
  .registerFunction(
    'Authorizer.path(string): ResourceCheck',
    (a: AuthorizerValue, path: string) => new CheckValue(a.decide, { path }),
  )
  .registerFunction('ResourceCheck.resource(string): ResourceCheck', (c: CheckValue, v: string) =>
    c.with('resource', v),
  )
  .registerFunction(
    'ResourceCheck.subresource(string): ResourceCheck',
    (c: CheckValue, v: string) => c.with('subresource', v),
  )
  .registerFunction('ResourceCheck.namespace(string): ResourceCheck', (c: CheckValue, v: string) =>
    c.with('namespace', v),
  )
  .registerFunction('ResourceCheck.name(string): ResourceCheck', (c: CheckValue, v: string) =>
    c.with('name', v),
  )
  .registerFunction(
    'ResourceCheck.check(string): Decision',
    (c: CheckValue, verb: string) => new DecisionValue(c.decide({ ...c.attributes, verb })),
  )
  .registerFunction('Decision.allowed(): bool', (d: DecisionValue) => d.decision.allowed)
  .registerFunction('Decision.reason(): string', (d: DecisionValue) => d.decision.reason);

export function authorizerFor(decide: (a: Attributes) => Decision): unknown {
  return new AuthorizerValue(decide);
}
