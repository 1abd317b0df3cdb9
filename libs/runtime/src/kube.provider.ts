import type { Provider } from '@nestjs/common';
import type { KubeConfig } from '@kubernetes/client-node';
import { MANAGED_BY_VALUE } from '#api';
import type { CommonConfig } from '#config';
import { apiServerCheck, apiServerUrl, loadKubeConfig, RestClient } from '#kube';
import type { HealthRegistry } from './health.js';
import { type Logger, type OperatorMetrics, instrumentKubeConfig } from '#observability';
import { CONFIG, HEALTH, KUBE, LOGGER, METRICS } from './tokens.js';

/** The process's connection to the API server: one KubeConfig, counted in rest_client_* metrics. */
export interface KubeConnection {
  readonly kubeConfig: KubeConfig;
  readonly rest: RestClient;
}

/**
 * Loads KUBECONFIG (or the in-cluster service account), logs which API server it points at (a
 * process talking to the wrong cluster is the first thing to rule out) and makes reaching it part
 * of readiness. Every request names the process in its User-Agent (`backupjob-operator/watcher`):
 * audit logs and the request metrics of the API server tell the operator's processes apart by it,
 * and a write without `fieldManager`, such as a Lease renewal, gets its field manager from it.
 */
export const kubeProvider = (app: string): Provider => ({
  provide: KUBE,
  inject: [CONFIG, LOGGER, METRICS, HEALTH],
  useFactory: (
    config: CommonConfig,
    logger: Logger,
    metrics: OperatorMetrics,
    health: HealthRegistry,
  ): KubeConnection => {
    const kubeConfig = instrumentKubeConfig(loadKubeConfig(config.kubeconfig), metrics.restClient);
    logger.info('using API server', { server: apiServerUrl(kubeConfig) });
    const rest = new RestClient(kubeConfig, undefined, {
      'user-agent': `${MANAGED_BY_VALUE}/${app}`,
    });
    health.register(apiServerCheck(rest));
    return { kubeConfig, rest };
  },
});
