import type { RestClient } from './rest.js';

/** Structurally the observability library's HealthCheck, so apps register it as it is. */
export interface ApiServerCheck {
  readonly name: string;
  readonly probes: readonly ('liveness' | 'readiness')[];
  check(signal: AbortSignal): Promise<{ server: string; version?: string }>;
}

/**
 * Readiness: the API server answers. `/version` is readable by every identity
 * (system:public-info-viewer), so the check needs no RBAC of its own. Not a liveness check: an
 * API server outage must not make the kubelet restart every operator pod.
 */
export function apiServerCheck(rest: RestClient): ApiServerCheck {
  return {
    name: 'apiserver',
    probes: ['readiness'],
    async check(signal) {
      const info = await rest.request<{ gitVersion?: string }>({ path: '/version', signal });
      return { server: rest.server, version: info?.gitVersion };
    },
  };
}
