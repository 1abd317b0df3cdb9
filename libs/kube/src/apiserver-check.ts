import type { RestClient } from './rest.js';

/**
 * Readiness of the API server connection: a GET of /version (allowed to every authenticated
 * identity by the system:public-info-viewer role), bounded so a hung server fails the probe.
 */
export function apiServerCheck(rest: RestClient, timeoutMs = 1000) {
  return {
    name: 'apiserver',
    probes: ['readiness'] as const,
    timeoutMs,
    async check(signal: AbortSignal) {
      await rest.request({ path: '/version', signal, timeoutMs });
      return { server: rest.server };
    },
  };
}
