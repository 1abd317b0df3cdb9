import type { KubeConfig, RequestContext } from '@kubernetes/client-node';

type ContextDispatcher = NonNullable<ReturnType<RequestContext['getDispatcher']>>;

/**
 * Keeps one connection pool per cluster and user. client-node 2.0.1 builds a new undici Agent on
 * every request whose kubeconfig carries any TLS option (a CA, a client certificate, or
 * insecure-skip-tls-verify, i.e. every real cluster): no connection is ever reused, each request
 * pays a TCP and TLS handshake, and the abandoned sockets pile up until the machine runs out of
 * ports. The first Agent built for a cluster and user is kept and handed to every later request.
 */
export function reuseConnections(kc: KubeConfig): KubeConfig {
  const apply = kc.applySecurityAuthentication.bind(kc);
  const pools = new Map<string, ContextDispatcher>();
  kc.applySecurityAuthentication = async (context: RequestContext): Promise<void> => {
    await apply(context);
    const fresh = context.getDispatcher() as ContextDispatcher | undefined;
    if (!fresh) return;
    const key = JSON.stringify([kc.getCurrentCluster()?.name, kc.getCurrentUser()?.name]);
    const kept = pools.get(key);
    if (!kept) {
      pools.set(key, fresh);
      return;
    }
    // The fresh Agent never connected, so it holds nothing; closing it would only build the
    // ClientDestroyedError undici hands its pending callbacks, a stack trace per request.
    context.setDispatcher(kept);
  };
  return kc;
}
