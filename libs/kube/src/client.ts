import { delimiter } from 'node:path';
import { KubeConfig } from '@kubernetes/client-node';
import { reuseConnections } from './connection-reuse.js';

/**
 * Loads the KubeConfig the operator talks with: the KUBECONFIG file(s) when given (merged as
 * kubectl does), else the pod's service account (in-cluster). Never falls back to ~/.kube/config
 * or localhost:8080 silently, so a pod without a service account fails at start with a reason.
 */
export function loadKubeConfig(kubeconfig: string | undefined): KubeConfig {
  const kc = new KubeConfig();
  if (kubeconfig) {
    const [first, ...rest] = kubeconfig.split(delimiter).filter((file) => file.length > 0);
    if (!first) throw new Error('KUBECONFIG names no file');
    kc.loadFromFile(first);
    for (const file of rest) {
      const more = new KubeConfig();
      more.loadFromFile(file);
      kc.mergeConfig(more);
    }
  } else {
    if (!process.env.KUBERNETES_SERVICE_HOST) {
      throw new Error(
        'KUBECONFIG is not set and KUBERNETES_SERVICE_HOST is unset: not running in a cluster, so there is no API server to talk to',
      );
    }
    kc.loadFromCluster();
  }
  apiServerUrl(kc);
  return reuseConnections(kc);
}

/** The API server the current context points at; logged at start so a wrong cluster shows. */
export function apiServerUrl(kc: KubeConfig): string {
  const cluster = kc.getCurrentCluster();
  if (!cluster) throw new Error('the kubeconfig has no current cluster (check current-context)');
  return cluster.server;
}
