import { stringify } from 'yaml';

export interface KubeconfigUser {
  name: string;
  token?: string;
}

/** A kubeconfig kubectl and client-node use as is (insecure-skip-tls-verify: client-node needs it even for http). */
export function kubeconfigText(server: string, user: KubeconfigUser, namespace?: string): string {
  const context: Record<string, string> = { cluster: 'emulator', user: user.name };
  if (namespace) context.namespace = namespace;
  return stringify({
    apiVersion: 'v1',
    kind: 'Config',
    clusters: [{ name: 'emulator', cluster: { server, 'insecure-skip-tls-verify': true } }],
    users: [{ name: user.name, user: user.token ? { token: user.token } : {} }],
    contexts: [{ name: 'emulator', context }],
    'current-context': 'emulator',
    preferences: {},
  });
}
