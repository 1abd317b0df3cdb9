import type { IncomingHttpHeaders } from 'node:http';
import { randomBytes } from 'node:crypto';
import { ApiError, unauthorized } from './errors.js';
import type { Store } from './store.js';
import type { UserInfo } from './types.js';

export const ADMIN: UserInfo = {
  username: 'admin',
  groups: ['system:masters', 'system:authenticated'],
};
export const ADMIN_TOKEN = 'emulator-admin-token';

interface IssuedToken {
  namespace: string;
  name: string;
  uid: string;
}

function serviceAccountUser(namespace: string, name: string, uid?: string): UserInfo {
  const user: UserInfo = {
    username: `system:serviceaccount:${namespace}:${name}`,
    groups: [
      'system:serviceaccounts',
      `system:serviceaccounts:${namespace}`,
      'system:authenticated',
    ],
  };
  if (uid) user.uid = uid;
  return user;
}

/** Splits headers that Node joined with ", " (Impersonate-Group may repeat). */
function headerValues(headers: IncomingHttpHeaders, name: string): string[] {
  const v = headers[name];
  if (v === undefined) return [];
  return (Array.isArray(v) ? v : [v])
    .flatMap((x) => x.split(','))
    .map((x) => x.trim())
    .filter(Boolean);
}

/**
 * Identity of a request: bearer tokens (static ones and ServiceAccount tokens this emulator
 * issued), else the anonymous default (kubectl sends no credentials over http), then
 * impersonation headers (docs/reference/access-authn-authz/authentication/#user-impersonation).
 */
export class Authenticator {
  private readonly staticTokens = new Map<string, UserInfo>([[ADMIN_TOKEN, ADMIN]]);
  private readonly issued = new Map<string, IssuedToken>();

  constructor(
    private readonly store: Store,
    readonly anonymous: UserInfo = ADMIN,
  ) {}

  addStaticToken(token: string, user: UserInfo): void {
    this.staticTokens.set(token, {
      ...user,
      groups: [...new Set([...user.groups, 'system:authenticated'])],
    });
  }

  /** A bearer token for a ServiceAccount; valid while that ServiceAccount exists. */
  issueServiceAccountToken(namespace: string, name: string): string {
    const sa = this.store.get('/serviceaccounts', namespace, name);
    if (!sa)
      throw new ApiError(404, 'NotFound', `serviceaccounts "${name}" not found`, {
        name,
        kind: 'serviceaccounts',
      });
    const token = `emu-sa.${Buffer.from(`${namespace}:${name}`).toString('base64url')}.${randomBytes(12).toString('base64url')}`;
    this.issued.set(token, { namespace, name, uid: sa.obj.metadata.uid! });
    return token;
  }

  userForToken(token: string): UserInfo | undefined {
    const fixed = this.staticTokens.get(token);
    if (fixed) return fixed;
    const sa = this.issued.get(token);
    if (!sa) return undefined;
    const current = this.store.get('/serviceaccounts', sa.namespace, sa.name);
    if (!current || current.obj.metadata.uid !== sa.uid) return undefined;
    return serviceAccountUser(sa.namespace, sa.name, sa.uid);
  }

  /** The caller before impersonation; throws 401 for an unknown token. */
  authenticate(headers: IncomingHttpHeaders): UserInfo {
    const auth = headers.authorization;
    if (!auth) return this.anonymous;
    const m = /^Bearer\s+(.+)$/i.exec(auth);
    if (!m) throw unauthorized();
    const user = this.userForToken(m[1]!.trim());
    if (!user) throw unauthorized();
    return user;
  }

  /** The impersonated identity, or undefined when no Impersonate-* header is present. */
  impersonated(headers: IncomingHttpHeaders): UserInfo | undefined {
    const name = headerValues(headers, 'impersonate-user')[0];
    const groups = headerValues(headers, 'impersonate-group');
    if (!name && groups.length === 0) return undefined;
    if (!name)
      throw new ApiError(
        500,
        'InternalError',
        'Internal error occurred: requested impersonation of groups without a user',
      );
    const sa = /^system:serviceaccount:([^:]+):([^:]+)$/.exec(name);
    const base = sa
      ? serviceAccountUser(sa[1]!, sa[2]!)
      : { username: name, groups: [] as string[] };
    const user: UserInfo = {
      username: base.username,
      groups: [...new Set([...groups, ...base.groups, 'system:authenticated'])],
    };
    const uid = headerValues(headers, 'impersonate-uid')[0];
    if (uid) user.uid = uid;
    const extra: Record<string, string[]> = {};
    for (const [k, v] of Object.entries(headers)) {
      if (k.startsWith('impersonate-extra-') && v !== undefined)
        extra[decodeURIComponent(k.slice(18))] = Array.isArray(v) ? v : [v];
    }
    if (Object.keys(extra).length) user.extra = extra;
    return user;
  }
}
