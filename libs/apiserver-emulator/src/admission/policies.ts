import { ApiError } from '../errors.js';
import type { ObjectService, WriteOptions } from '../objects.js';
import type { RbacAuthorizer } from '../rbac.js';
import type { Registry } from '../registry.js';
import { resourceType, type ResourceType } from '../resource-type.js';
import type { KubeObject, UserInfo } from '../types.js';
import { authorizerFor, policyEnvironment } from './cel-authorizer.js';

const GROUP = 'admissionregistration.k8s.io';
const POLICIES = `${GROUP}/validatingadmissionpolicies`;
const BINDINGS = `${GROUP}/validatingadmissionpolicybindings`;

interface ResourceRule {
  apiGroups?: string[];
  apiVersions?: string[];
  operations?: string[];
  resources?: string[];
}

interface Validation {
  expression: string;
  message?: string;
  messageExpression?: string;
  reason?: string;
}

interface PolicySpec {
  failurePolicy?: 'Fail' | 'Ignore';
  matchConstraints?: { resourceRules?: ResourceRule[] };
  variables?: { name: string; expression: string }[];
  validations?: Validation[];
}

interface BindingSpec {
  policyName?: string;
  validationActions?: string[];
}

type Operation = 'CREATE' | 'UPDATE';

interface AdmissionRequest {
  readonly rt: ResourceType;
  readonly obj: KubeObject;
  readonly old: KubeObject | undefined;
  readonly user: UserInfo;
}

function listed(list: string[] | undefined, value: string): boolean {
  return !!list && (list.includes('*') || list.includes(value));
}

function matches(spec: PolicySpec, rt: ResourceType, operation: Operation): boolean {
  return (spec.matchConstraints?.resourceRules ?? []).some(
    (r) =>
      listed(r.apiGroups, rt.group) &&
      listed(r.apiVersions, rt.version) &&
      listed(r.operations, operation) &&
      listed(r.resources, rt.plural),
  );
}

/**
 * ValidatingAdmissionPolicy and its binding (admissionregistration.k8s.io/v1, GA in 1.30): every
 * bound policy whose matchConstraints cover a create or update of the main resource evaluates its
 * CEL validations, and a binding with the Deny action turns a false one into a rejection.
 * Supported: resourceRules, variables, validations with message, messageExpression and reason,
 * failurePolicy, and the authorizer library. Not supported: params, selectors, matchConditions.
 */
export class AdmissionPolicies {
  constructor(
    private readonly svc: ObjectService,
    private readonly authz: RbacAuthorizer,
  ) {}

  static resourceTypes(): ResourceType[] {
    const policyType = (plural: string, kind: string) =>
      resourceType({
        group: GROUP,
        version: 'v1',
        plural,
        kind,
        namespaced: false,
        generation: true,
      });
    return [
      policyType('validatingadmissionpolicies', 'ValidatingAdmissionPolicy'),
      policyType('validatingadmissionpolicybindings', 'ValidatingAdmissionPolicyBinding'),
    ];
  }

  /** The admission hook: throws the rejection of the first failing validation. */
  admit(rt: ResourceType, obj: KubeObject, old: KubeObject | undefined, opts: WriteOptions): void {
    if (!opts.user || opts.subresource) return;
    const operation: Operation = old ? 'UPDATE' : 'CREATE';
    const request = { rt, obj, old, user: opts.user };
    for (const stored of this.svc.store.list(BINDINGS)) {
      const binding = stored.obj.spec as BindingSpec | undefined;
      if (!binding?.policyName || !(binding.validationActions ?? []).includes('Deny')) continue;
      const policy = this.svc.store.get(POLICIES, '', binding.policyName)?.obj;
      const spec = policy?.spec as PolicySpec | undefined;
      if (!spec || !matches(spec, rt, operation)) continue;
      this.validate(spec, request, operation, policy!.metadata.name!, stored.obj.metadata.name!);
    }
  }

  private validate(
    spec: PolicySpec,
    req: AdmissionRequest,
    operation: Operation,
    policyName: string,
    bindingName: string,
  ): void {
    const namespace = req.obj.metadata.namespace ?? '';
    const context: Record<string, unknown> = {
      object: req.obj,
      oldObject: req.old ?? null,
      params: null,
      namespaceObject: namespace
        ? (this.svc.store.get('/namespaces', '', namespace)?.obj ?? null)
        : null,
      request: {
        operation,
        namespace,
        name: req.obj.metadata.name ?? '',
        kind: { group: req.rt.group, version: req.rt.version, kind: req.rt.kind },
        resource: { group: req.rt.group, version: req.rt.version, resource: req.rt.plural },
        userInfo: { username: req.user.username, groups: req.user.groups, uid: req.user.uid ?? '' },
      },
      authorizer: authorizerFor((a) => this.authz.authorize(req.user, a)),
    };
    const variables: Record<string, unknown> = {};
    context.variables = variables;
    const denied = `ValidatingAdmissionPolicy '${policyName}' with binding '${bindingName}' denied request`;
    const fail = (message: string, reason = 'Invalid') => {
      throw rejection(req, reason, `${denied}: ${message}`);
    };
    try {
      for (const v of spec.variables ?? [])
        variables[v.name] = policyEnvironment.evaluate(v.expression, context);
    } catch (err) {
      if (spec.failurePolicy !== 'Ignore')
        fail(`variable evaluation failed: ${(err as Error).message}`);
      return;
    }
    for (const v of spec.validations ?? []) {
      let ok: unknown;
      try {
        ok = policyEnvironment.evaluate(v.expression, context);
      } catch (err) {
        if (spec.failurePolicy !== 'Ignore')
          fail(`expression '${v.expression}' resulted in error: ${(err as Error).message}`);
        continue;
      }
      if (ok === true) continue;
      fail(messageOf(v, context), v.reason ?? 'Invalid');
    }
  }
}

function messageOf(v: Validation, context: Record<string, unknown>): string {
  if (v.messageExpression) {
    try {
      const text = policyEnvironment.evaluate(v.messageExpression, context);
      if (typeof text === 'string' && text.trim() !== '') return text;
    } catch {
      // The API server falls back to message when messageExpression fails.
    }
  }
  return v.message ?? `failed expression: ${v.expression}`;
}

/** The Status the API server answers with: 403 Forbidden or 422 Invalid, per the reason. */
function rejection(req: AdmissionRequest, reason: string, message: string): ApiError {
  const name = req.obj.metadata.name ?? '';
  const subject = `${req.rt.plural}${req.rt.group ? `.${req.rt.group}` : ''} "${name}"`;
  const details = { name, group: req.rt.group, kind: req.rt.plural };
  if (reason === 'Forbidden')
    return new ApiError(403, 'Forbidden', `${subject} is forbidden: ${message}`, details);
  return new ApiError(422, 'Invalid', `${subject} is invalid: : ${message}`, details);
}

/** Serves the policy kinds and makes every write consult them. */
export function installAdmissionPolicies(
  registry: Registry,
  svc: ObjectService,
  authz: RbacAuthorizer,
): void {
  for (const rt of AdmissionPolicies.resourceTypes()) registry.add(rt, Number.MAX_SAFE_INTEGER);
  const policies = new AdmissionPolicies(svc, authz);
  svc.admissionHooks.push((rt, obj, old, opts) => policies.admit(rt, obj, old, opts));
}
