import { isApiError } from '#kube';

/** What the reconcile loop does about a failed API call. */
export type FailureKind =
  | 'conflict' // 409: someone wrote first or the object already exists; re-read and retry now
  | 'notFound' // 404
  | 'forbidden' // 403: RBAC lacks a permission
  | 'invalid' // 400/422: the request itself is wrong; retrying the same request fails again
  | 'transient'; // 429, 5xx, timeouts, network errors: back off

export interface ApiFailure {
  readonly kind: FailureKind;
  readonly code: number | undefined;
  /** The Status reason (Conflict, NotFound, Forbidden, TooManyRequests …) or the error name. */
  readonly reason: string;
  readonly message: string;
  /** Retry-After in ms when the server sent one (429, 503). */
  readonly retryAfterMs: number | undefined;
}

function kindOf(code: number): FailureKind {
  if (code === 409) return 'conflict';
  if (code === 404) return 'notFound';
  if (code === 403) return 'forbidden';
  if (code === 400 || code === 422) return 'invalid';
  return 'transient';
}

export function classify(err: unknown): ApiFailure {
  if (isApiError(err)) {
    return {
      kind: kindOf(err.code),
      code: err.code,
      reason: err.reason ?? `HTTP${err.code}`,
      message: err.message,
      retryAfterMs: err.retryAfterMs,
    };
  }
  const error = err as Error | undefined;
  return {
    kind: 'transient',
    code: undefined,
    reason: error?.name ?? 'Error',
    message: error?.message ?? String(err),
    retryAfterMs: undefined,
  };
}

export function isNotFound(err: unknown): boolean {
  return isApiError(err, 404);
}

/** The permission a 403 names, e.g. `User "x" cannot update resource "cronjobs" in API group "batch" in the namespace "ops"`. */
export interface MissingPermission {
  readonly verb: string;
  readonly resource: string;
  readonly group: string;
  readonly namespace: string | undefined;
}

export function missingPermission(message: string): MissingPermission | undefined {
  const match =
    /cannot (\S+) resource "([^"]+)"(?: in API group "([^"]*)")?(?: in the namespace "([^"]+)")?/.exec(
      message,
    );
  if (!match) return undefined;
  const [, verb = '', resource = '', group = '', namespace] = match;
  return { verb, resource, group, namespace };
}
