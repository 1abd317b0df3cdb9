import type { ResourceType } from '../resource-type.js';
import { labelSelectorFromObject } from '../selectors.js';
import type { KubeObject, UserInfo } from '../types.js';
import type { LabelSelector, MatchResources, NamedRule, Operation } from './policy-spec.js';

/** One request as admission sees it (admission.Attributes). */
export interface AdmissionRequest {
  readonly operation: Operation;
  /** The served resource the request was made to. */
  readonly rt: ResourceType;
  readonly subresource: string;
  /** The object's namespace; for a Namespace object, its own name, as kube-apiserver sets it. */
  readonly namespace: string;
  readonly name: string;
  /** null for DELETE. */
  readonly object: KubeObject | null;
  /** null for CREATE. */
  readonly oldObject: KubeObject | null;
  readonly user: UserInfo;
  readonly dryRun: boolean;
}

export interface MatchContext {
  /** Labels of the request's namespace; undefined when it does not exist. */
  namespaceLabels(name: string): Record<string, string> | undefined;
  /** Other served versions of the request's resource (matchPolicy Equivalent). */
  equivalents(rt: ResourceType): ResourceType[];
}

function isNamespaceResource(rt: ResourceType): boolean {
  return rt.group === '' && rt.plural === 'namespaces';
}

function exactOrWildcard(items: readonly string[] | undefined, value: string): boolean {
  return (items ?? []).some((item) => item === '*' || item === value);
}

/** rules.Matcher: scope, operation, group, version, and `resource/subresource` with wildcards. */
function ruleMatches(rule: NamedRule, req: AdmissionRequest, rt: ResourceType): boolean {
  const scope = rule.scope ?? '*';
  if (scope === 'Namespaced' && (isNamespaceResource(rt) || !rt.namespaced)) return false;
  if (scope === 'Cluster' && !isNamespaceResource(rt) && rt.namespaced) return false;
  if (!(rule.operations ?? []).some((op) => op === '*' || op === req.operation)) return false;
  if (!exactOrWildcard(rule.apiGroups, rt.group)) return false;
  if (!exactOrWildcard(rule.apiVersions, rt.version)) return false;
  const resourceMatches = (rule.resources ?? []).some((entry) => {
    const [res = '', sub = ''] = entry.split(/\/(.*)/s);
    return (res === '*' || res === rt.plural) && (sub === '*' || sub === req.subresource);
  });
  if (!resourceMatches) return false;
  const names = rule.resourceNames ?? [];
  return names.length === 0 || names.includes(req.name);
}

/**
 * The resource the rules match the request as: its own, or under matchPolicy Equivalent another
 * served version of it (a rule for v1 then also covers requests to v1beta1), or none.
 */
function matchRules(
  rules: readonly NamedRule[] | undefined,
  match: MatchResources,
  req: AdmissionRequest,
  ctx: MatchContext,
): ResourceType | undefined {
  if (!rules) return undefined;
  if (rules.some((r) => ruleMatches(r, req, req.rt))) return req.rt;
  if (match.matchPolicy !== 'Equivalent') return undefined;
  return ctx.equivalents(req.rt).find((rt) => rules.some((r) => ruleMatches(r, req, rt)));
}

function isEmpty(selector: LabelSelector | undefined): boolean {
  return (
    !selector ||
    (Object.keys(selector.matchLabels ?? {}).length === 0 &&
      (selector.matchExpressions ?? []).length === 0)
  );
}

/** namespace.Matcher: cluster-scoped requests (other than Namespaces) always match. */
function namespaceMatches(
  selector: LabelSelector | undefined,
  req: AdmissionRequest,
  ctx: MatchContext,
): boolean {
  if (isEmpty(selector)) return true;
  const namespaceObject = isNamespaceResource(req.rt) && req.subresource === '';
  if (req.namespace === '' && !namespaceObject) return true;
  const labels =
    namespaceObject && (req.operation === 'CREATE' || req.operation === 'UPDATE')
      ? req.object?.metadata.labels
      : ctx.namespaceLabels(req.namespace);
  return labelSelectorFromObject(selector!)(labels ?? {});
}

/** object.Matcher: the object or the old object carries matching labels. */
function objectMatches(selector: LabelSelector | undefined, req: AdmissionRequest): boolean {
  if (isEmpty(selector)) return true;
  const matcher = labelSelectorFromObject(selector!);
  return [req.object, req.oldObject].some((o) => o !== null && matcher(o.metadata.labels ?? {}));
}

/**
 * matching.Matcher.Matches for a policy's matchConstraints or a binding's matchResources (where
 * no resourceRules means every resource the policy matches). Returns the resource matched as.
 */
export function matchResources(
  match: MatchResources | undefined,
  req: AdmissionRequest,
  ctx: MatchContext,
  isBinding: boolean,
): ResourceType | undefined {
  if (!match) return isBinding ? req.rt : undefined;
  if (!namespaceMatches(match.namespaceSelector, req, ctx)) return undefined;
  if (!objectMatches(match.objectSelector, req)) return undefined;
  if (matchRules(match.excludeResourceRules, match, req, ctx)) return undefined;
  if (isBinding && match.resourceRules === undefined) return req.rt;
  return matchRules(match.resourceRules, match, req, ctx);
}
