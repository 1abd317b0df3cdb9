import type { Environment } from '@marcbachmann/cel-js';
import { ApiError, invalid, qualifiedResource, type StatusDetails } from '../errors.js';
import { warningHeaders } from '../http/respond.js';
import type { ObjectService, WriteOptions } from '../objects.js';
import type { RbacAuthorizer } from '../rbac.js';
import type { Registry } from '../registry.js';
import { apiVersionOf, resourceType, type ResourceType } from '../resource-type.js';
import type { KubeObject, UserInfo } from '../types.js';
import { authorizerFor } from './authorizer-library.js';
import { celMessage, expressionEnvironment, messageEnvironment, toCel } from './cel-environment.js';
import { matchResources, type AdmissionRequest, type MatchContext } from './matching.js';
import {
  defaultBinding,
  defaultPolicy,
  validateBinding,
  validatePolicy,
  type BindingSpec,
  type Operation,
  type PolicySpec,
  type Validation,
} from './policy-spec.js';

const GROUP = 'admissionregistration.k8s.io';
const POLICIES = `${GROUP}/validatingadmissionpolicies`;
const BINDINGS = `${GROUP}/validatingadmissionpolicybindings`;
/** celconfig.MaxEvaluatedMessageExpressionSizeBytes: a longer message is not used. */
const MAX_MESSAGE_BYTES = 5 * 1024;

/** One validation's verdict (PolicyDecision). */
interface Decision {
  readonly deny: boolean;
  readonly message: string;
  /** Empty for evaluation errors, which answer as Invalid. */
  readonly reason: string;
}

interface Denial extends Decision {
  readonly policy: string;
  readonly binding: string;
}

type Context = Record<string, unknown>;

function named(list: Iterable<{ obj: KubeObject }>): KubeObject[] {
  return [...list]
    .map((s) => s.obj)
    .sort((a, b) => (a.metadata.name ?? '').localeCompare(b.metadata.name ?? ''));
}

/**
 * An expression's value, or the error a real server reports for it: `expression '<text>'
 * resulted in error: <why>`.
 */
function evaluate(env: Environment, expression: string, context: Context): unknown {
  try {
    return env.evaluate(expression, context);
  } catch (err) {
    throw new Error(`expression '${expression}' resulted in error: ${celMessage(err)}`, {
      cause: err,
    });
  }
}

/**
 * The policy's variables as kube-apiserver composes them: each evaluated on first use and then
 * remembered; one that fails makes every expression that reads it fail, and no other.
 */
function lazyVariables(spec: PolicySpec, context: Context): Record<string, unknown> {
  const variables: Record<string, unknown> = {};
  for (const v of spec.variables ?? []) {
    let outcome: { value: unknown } | { error: Error } | undefined;
    Object.defineProperty(variables, v.name, {
      enumerable: true,
      get() {
        outcome ??= (() => {
          try {
            return { value: expressionEnvironment.evaluate(v.expression, context) };
          } catch (err) {
            // Reported by the expression that reads the variable, as its own error.
            return { error: new Error(celMessage(err), { cause: err }) };
          }
        })();
        if ('error' in outcome) throw outcome.error;
        return outcome.value;
      },
    });
  }
  return variables;
}

/**
 * The failure message: messageExpression's string when it evaluates to one that is not blank,
 * not over 5 KiB and without line breaks; else `message`; else `failed expression: <text>`.
 */
function messageOf(v: Validation, context: Context): string {
  if (v.messageExpression) {
    try {
      const text = messageEnvironment.evaluate(v.messageExpression, context);
      if (typeof text === 'string') {
        const trimmed = text.trim();
        if (
          trimmed !== '' &&
          Buffer.byteLength(trimmed) <= MAX_MESSAGE_BYTES &&
          !/\n/.test(trimmed)
        ) {
          return trimmed;
        }
      }
    } catch {
      // A failing messageExpression falls back to the static message, as on a real server.
    }
  }
  const message = v.message?.trim();
  return message ? message : `failed expression: ${v.expression.trim()}`;
}

/**
 * ValidatingAdmissionPolicy and its binding (admissionregistration.k8s.io/v1, GA in 1.30), as
 * kube-apiserver's validating policy plugin applies them to every create, update and delete:
 * policies whose matchConstraints (and matchConditions) cover the request are evaluated once per
 * binding whose matchResources also do; a failing validation is enforced by the binding's
 * actions (Deny rejects, Warn adds a warning, Audit records nothing here); an expression that
 * errors counts as a failing one under failurePolicy Fail and is skipped under Ignore. Every
 * policy and binding is evaluated and the first denial answers the request. Writes of policies
 * and bindings are defaulted and validated (CEL compiled) like the real registry does.
 */
class AdmissionPolicies {
  private readonly match: MatchContext;

  constructor(
    private readonly svc: ObjectService,
    private readonly authz: RbacAuthorizer,
    registry: Registry,
  ) {
    this.match = {
      namespaceLabels: (name) => svc.store.get('/namespaces', '', name)?.obj.metadata.labels,
      equivalents: (rt) =>
        registry.all().filter((o) => o.storageKey === rt.storageKey && o !== rt && !o.virtual),
    };
  }

  static resourceTypes(): ResourceType[] {
    const policyType = (plural: string, kind: string, statusSubresource: boolean) =>
      resourceType({
        group: GROUP,
        version: 'v1',
        plural,
        kind,
        namespaced: false,
        generation: true,
        statusSubresource,
      });
    return [
      {
        ...policyType('validatingadmissionpolicies', 'ValidatingAdmissionPolicy', true),
        defaults: defaultPolicy,
      },
      {
        ...policyType(
          'validatingadmissionpolicybindings',
          'ValidatingAdmissionPolicyBinding',
          false,
        ),
        defaults: defaultBinding,
      },
    ];
  }

  /** The registry's validation of policy and binding writes, whoever makes them. */
  validate(rt: ResourceType, obj: KubeObject, opts: WriteOptions): void {
    if (rt.group !== GROUP || opts.subresource) return;
    const errors =
      rt.storageKey === POLICIES
        ? validatePolicy(obj)
        : rt.storageKey === BINDINGS
          ? validateBinding(obj)
          : [];
    if (errors.length) throw invalid(rt.kind, rt.group, obj.metadata.name ?? '', errors);
  }

  /** The admission check of a request made over HTTP; returns the warnings to send. */
  admit(req: AdmissionRequest): string[] {
    // Policies never judge policies and bindings, so a bad one can always be fixed.
    if (req.rt.group === GROUP) return [];
    const denials: Denial[] = [];
    const warnings: string[] = [];
    const bindings = named(this.svc.store.list(BINDINGS));
    for (const policy of named(this.svc.store.list(POLICIES))) {
      const spec = (policy.spec ?? {}) as PolicySpec;
      const matchedAs = matchResources(spec.matchConstraints, req, this.match, false);
      if (!matchedAs) continue;
      const name = policy.metadata.name ?? '';
      for (const binding of bindings) {
        const bspec = (binding.spec ?? {}) as BindingSpec;
        if (bspec.policyName !== name) continue;
        if (!matchResources(bspec.matchResources, req, this.match, true)) continue;
        const bindingName = binding.metadata.name ?? '';
        for (const decision of this.decide(spec, req, matchedAs)) {
          if (!decision.deny) continue;
          const actions = bspec.validationActions ?? [];
          if (actions.includes('Deny'))
            denials.push({ ...decision, policy: name, binding: bindingName });
          if (actions.includes('Warn')) {
            warnings.push(
              `Validation failed for ValidatingAdmissionPolicy '${name}' with binding '${bindingName}': ${decision.message}`,
            );
          }
        }
      }
    }
    const [first] = denials;
    if (first) throw rejection(req, first, warnings);
    return warnings;
  }

  /** Validator.Validate: matchConditions, then every validation, each one decision. */
  private decide(spec: PolicySpec, req: AdmissionRequest, matchedAs: ResourceType): Decision[] {
    const fail = (spec.failurePolicy ?? 'Fail') === 'Fail';
    const context = this.context(req, matchedAs);
    context.variables = lazyVariables(spec, context);
    const errors: string[] = [];
    for (const condition of spec.matchConditions ?? []) {
      try {
        if (evaluate(expressionEnvironment, condition.expression, context) === false) return [];
      } catch (err) {
        errors.push((err as Error).message);
      }
    }
    if (errors.length > 0) {
      const message = errors.length === 1 ? errors[0]! : `[${errors.join(', ')}]`;
      return fail ? [{ deny: true, message, reason: '' }] : [];
    }
    return (spec.validations ?? []).map((v): Decision => {
      let result: unknown;
      try {
        result = evaluate(expressionEnvironment, v.expression, context);
      } catch (err) {
        return { deny: fail, message: (err as Error).message, reason: '' };
      }
      if (result === true) return { deny: false, message: '', reason: '' };
      return { deny: true, message: messageOf(v, context), reason: v.reason ?? 'Invalid' };
    });
  }

  /** The CEL variables of one request (cel.CreateAdmissionRequest and the activation). */
  private context(req: AdmissionRequest, matchedAs: ResourceType): Context {
    const asMatched = (o: KubeObject | null) =>
      o && toCel({ ...o, apiVersion: apiVersionOf(matchedAs) });
    const { rt, user } = req;
    const namespaced = req.namespace !== '' && !(rt.group === '' && rt.plural === 'namespaces');
    return {
      object: asMatched(req.object),
      oldObject: asMatched(req.oldObject),
      params: null,
      namespaceObject: namespaced ? this.namespaceObject(req.namespace) : null,
      request: toCel({
        uid: '',
        kind: { group: matchedAs.group, version: matchedAs.version, kind: matchedAs.kind },
        resource: {
          group: matchedAs.group,
          version: matchedAs.version,
          resource: matchedAs.plural,
        },
        subResource: req.subresource,
        requestKind: { group: rt.group, version: rt.version, kind: rt.kind },
        requestResource: { group: rt.group, version: rt.version, resource: rt.plural },
        requestSubResource: req.subresource,
        name: req.name,
        namespace: req.namespace,
        operation: req.operation,
        userInfo: {
          username: user.username,
          uid: user.uid ?? '',
          groups: user.groups,
          extra: user.extra ?? {},
        },
        dryRun: req.dryRun,
      }),
      authorizer: authorizerFor(user, (u, a) => this.authz.authorize(u, a), {
        group: rt.group,
        resource: rt.plural,
        subresource: req.subresource,
        namespace: req.namespace,
        name: req.name,
      }),
    };
  }

  /** What CEL sees of the namespace: metadata without managedFields and ownerReferences, spec, status. */
  private namespaceObject(name: string): unknown {
    const ns = this.svc.store.get('/namespaces', '', name)?.obj;
    if (!ns) return null;
    const { managedFields: _m, ownerReferences: _o, ...metadata } = ns.metadata;
    return toCel({ metadata, spec: ns.spec, status: ns.status });
  }
}

const CODES: Readonly<Record<string, number>> = {
  Forbidden: 403,
  Unauthorized: 401,
  RequestEntityTooLarge: 413,
  Invalid: 422,
};

/**
 * The Status a denial answers with: admission.NewForbidden's message (`<resource> "<name>" is
 * forbidden: ValidatingAdmissionPolicy '<p>' with binding '<b>' denied request: <message>`),
 * then the reason and code of the validation (Invalid, 422, when it gives none).
 */
function rejection(req: AdmissionRequest, d: Denial, warnings: string[]): ApiError {
  const reason = d.reason || 'Invalid';
  const name = req.name || req.object?.metadata.generateName || 'Unknown';
  const message = `ValidatingAdmissionPolicy '${d.policy}' with binding '${d.binding}' denied request: ${d.message}`;
  const subject = qualifiedResource(req.rt.plural, req.rt.group);
  const details: StatusDetails = { name, kind: req.rt.plural, causes: [{ message }] };
  if (req.rt.group) details.group = req.rt.group;
  // Warnings from other bindings reach the client with the rejection, as on a real server.
  return new ApiError(
    CODES[reason] ?? 422,
    reason,
    `${subject} "${name}" is forbidden: ${message}`,
    details,
    warningHeaders(warnings),
  );
}

/** Serves the policy kinds and makes every write and delete made over HTTP consult them. */
export function installAdmissionPolicies(
  registry: Registry,
  svc: ObjectService,
  authz: RbacAuthorizer,
): void {
  for (const rt of AdmissionPolicies.resourceTypes()) registry.add(rt, Number.MAX_SAFE_INTEGER);
  const policies = new AdmissionPolicies(svc, authz, registry);
  svc.admissionHooks.push((rt, obj, old, opts) => {
    policies.validate(rt, obj, opts);
    if (!opts.user) return [];
    const operation: Operation = old ? 'UPDATE' : 'CREATE';
    return policies.admit(requestOf(rt, operation, obj, old ?? null, opts.user, opts));
  });
  svc.deleteHooks.push((rt, old, opts) => {
    if (!opts.user) return [];
    return policies.admit(requestOf(rt, 'DELETE', null, old, opts.user, opts));
  });
}

function requestOf(
  rt: ResourceType,
  operation: Operation,
  object: KubeObject | null,
  oldObject: KubeObject | null,
  user: UserInfo,
  opts: { subresource?: string; dryRun?: boolean },
): AdmissionRequest {
  const meta = (object ?? oldObject)!.metadata;
  const isNamespace = rt.group === '' && rt.plural === 'namespaces';
  return {
    operation,
    rt,
    subresource: opts.subresource ?? '',
    namespace: isNamespace ? (meta.name ?? '') : (meta.namespace ?? ''),
    name: meta.name ?? '',
    object,
    oldObject,
    user,
    dryRun: opts.dryRun ?? false,
  };
}
