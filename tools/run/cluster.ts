import { existsSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { KubeConfig } from '@kubernetes/client-node';

export interface CurrentCluster {
  /** The KUBECONFIG value the processes get (out of the cluster they must not fall back to in-cluster config). */
  kubeconfig: string;
  context: string;
  server: string;
}

/**
 * The cluster kubectl would talk to now: KUBECONFIG, else ~/.kube/config, and its current context.
 * Throws naming the file when there is none, so nothing starts against an unknown cluster.
 */
export function currentCluster(): CurrentCluster {
  const kubeconfig = process.env.KUBECONFIG || join(homedir(), '.kube', 'config');
  const missing = kubeconfig.split(':').filter((p) => p !== '' && !existsSync(p));
  if (missing.length > 0)
    throw new Error(
      `no kubeconfig at ${missing.join(', ')}: set KUBECONFIG or create ~/.kube/config`,
    );
  const kc = new KubeConfig();
  // loadFromDefault merges a ":"-separated KUBECONFIG as kubectl does.
  if (process.env.KUBECONFIG) kc.loadFromDefault();
  else kc.loadFromFile(kubeconfig);
  const context = kc.getCurrentContext();
  const server = kc.getCurrentCluster()?.server;
  if (!context || !server)
    throw new Error(`${kubeconfig} has no current context: kubectl config use-context <name>`);
  return { kubeconfig, context, server };
}
