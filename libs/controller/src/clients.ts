import {
  AuthorizationV1Api,
  BatchV1Api,
  CustomObjectsApi,
  EventsV1Api,
  Observable,
  type ConfigurationOptions,
  type KubeConfig,
  type RequestContext,
  type ResponseContext,
} from '@kubernetes/client-node';
import { MANAGED_BY_VALUE } from '#api';

/**
 * The API server names the field manager of a write without `fieldManager` after the User-Agent
 * up to its first '/'. client-node's own agent would make every write "kubernetes-client-javascript",
 * and the watcher tells the operator's own writes from anyone else's by this name.
 */
const USER_AGENT = `${MANAGED_BY_VALUE}/worker`;

/** The generated API clients the controller uses, sharing one KubeConfig. */
export interface KubeClients {
  readonly objects: CustomObjectsApi;
  readonly batch: BatchV1Api;
  readonly events: EventsV1Api;
  readonly authorization: AuthorizationV1Api;
  /** Per-call options: a request timeout, the run's abort signal, the Content-Type for patches. */
  options(contentType?: string): ConfigurationOptions;
  /** The same clients, with every request also aborted when `signal` fires (lease lost, shutdown). */
  withSignal(signal: AbortSignal | undefined): KubeClients;
}

/**
 * Middleware in the shape client-node's setHeaderOptions builds (its Observable). It bounds each
 * request with a timeout, since a hung connection must not hold a key forever, ties it to the
 * run's signal, names the operator as the writer (USER_AGENT), and sets the Content-Type, which
 * the generated patch methods would otherwise send as JSON patch.
 */
function requestMiddleware(
  timeoutMs: number,
  signal: AbortSignal | undefined,
  contentType: string | undefined,
) {
  return {
    pre: (context: RequestContext) => {
      const timeout = AbortSignal.timeout(timeoutMs);
      context.setSignal(signal ? AbortSignal.any([timeout, signal]) : timeout);
      context.setHeaderParam('User-Agent', USER_AGENT);
      if (contentType) context.setHeaderParam('Content-Type', contentType);
      return new Observable(Promise.resolve(context));
    },
    post: (response: ResponseContext) => new Observable(Promise.resolve(response)),
  };
}

export function createKubeClients(kc: KubeConfig, requestTimeoutMs = 30_000): KubeClients {
  const apis = {
    objects: kc.makeApiClient(CustomObjectsApi),
    batch: kc.makeApiClient(BatchV1Api),
    events: kc.makeApiClient(EventsV1Api),
    authorization: kc.makeApiClient(AuthorizationV1Api),
  };
  const scoped = (signal: AbortSignal | undefined): KubeClients => ({
    ...apis,
    options: (contentType) =>
      ({
        middleware: [requestMiddleware(requestTimeoutMs, signal, contentType)],
        middlewareMergeStrategy: 'append',
      }) as ConfigurationOptions,
    withSignal: scoped,
  });
  return scoped(undefined);
}
