import { badRequest } from '../errors.js';
import type { Authenticator } from '../authn.js';
import type { RbacAuthorizer, Attributes } from '../rbac.js';
import type { ResourceType } from '../resource-type.js';
import type { UserInfo } from '../types.js';

interface ReviewSpec {
  resourceAttributes?: {
    namespace?: string;
    verb?: string;
    group?: string;
    resource?: string;
    subresource?: string;
    name?: string;
  };
  nonResourceAttributes?: { path?: string; verb?: string };
  user?: string;
  groups?: string[];
  uid?: string;
  namespace?: string;
}

function attributesOf(spec: ReviewSpec): Attributes {
  const r = spec.resourceAttributes;
  if (r)
    return {
      verb: r.verb ?? '',
      group: r.group ?? '',
      resource: r.resource ?? '',
      subresource: r.subresource,
      namespace: r.namespace,
      name: r.name,
    };
  const n = spec.nonResourceAttributes;
  if (n) return { verb: n.verb ?? '', path: n.path ?? '' };
  throw badRequest('exactly one of nonResourceAttributes or resourceAttributes must be specified');
}

/**
 * Access reviews and whoami (docs/reference/access-authn-authz/authorization/#checking-api-access).
 * They answer even when enforcement is off, so `kubectl auth can-i` always reports RBAC.
 */
export function review(
  rt: ResourceType,
  body: Record<string, unknown>,
  caller: UserInfo,
  { authn, authz }: { authn: Authenticator; authz: RbacAuthorizer },
  namespace: string,
): Record<string, unknown> {
  const spec = (body.spec ?? {}) as ReviewSpec;
  const out: Record<string, unknown> = {
    kind: rt.kind,
    apiVersion: `${rt.group}/${rt.version}`,
    metadata: { creationTimestamp: null, ...(body.metadata as object | undefined) },
  };
  switch (rt.plural) {
    case 'selfsubjectreviews':
      return { ...out, status: { userInfo: caller } };
    case 'selfsubjectrulesreviews': {
      const rules = authz.rulesFor(caller, spec.namespace ?? '');
      return {
        ...out,
        spec,
        status: {
          resourceRules: rules
            .filter((r) => !r.nonResourceURLs)
            .map((r) => ({
              verbs: r.verbs ?? [],
              apiGroups: r.apiGroups,
              resources: r.resources,
              resourceNames: r.resourceNames,
            })),
          nonResourceRules: rules
            .filter((r) => r.nonResourceURLs)
            .map((r) => ({ verbs: r.verbs ?? [], nonResourceURLs: r.nonResourceURLs })),
          incomplete: false,
        },
      };
    }
    case 'tokenreviews': {
      const token = (body.spec as { token?: unknown } | undefined)?.token;
      const user = typeof token === 'string' ? authn.userForToken(token) : undefined;
      const status = user ? { authenticated: true, user } : { authenticated: false };
      return { ...out, spec: body.spec, status };
    }
    default: {
      const subject: UserInfo =
        rt.plural === 'selfsubjectaccessreviews'
          ? caller
          : { username: spec.user ?? '', groups: spec.groups ?? [], uid: spec.uid };
      const attrs = attributesOf(spec);
      if (rt.plural === 'localsubjectaccessreviews') attrs.namespace = namespace;
      const decision = authz.authorize(subject, attrs);
      const status: Record<string, unknown> = { allowed: decision.allowed };
      if (decision.reason) status.reason = decision.reason;
      return { ...out, spec, status };
    }
  }
}
