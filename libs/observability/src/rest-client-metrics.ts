import type { KubeConfig, RequestContext } from '@kubernetes/client-node';
import { getGlobalDispatcher, type Dispatcher } from 'undici';
import type { RestClientMetrics } from './metrics.js';

type ResponseHeaders = Parameters<NonNullable<Dispatcher.DispatchHandler['onResponseStart']>>[2];

/**
 * Counts every request a KubeConfig's clients make in rest_client_requests_total and
 * rest_client_request_duration_seconds.
 *
 * Why a dispatcher interceptor installed from applySecurityAuthentication: in client-node 2 the
 * generated APIs, KubernetesObjectApi and Watch all call `kc.applySecurityAuthentication(ctx)` and
 * then undici's `fetch` with `ctx.getDispatcher()`. Request middleware (ConfigurationOptions)
 * reaches only the generated APIs and not Watch, and a process-wide diagnostics channel would also
 * count requests that are not the API server's. Wrapping the dispatcher here covers the three
 * paths, for this KubeConfig only. Latency is measured to the response headers, so a long watch
 * stream counts once with the time it took to start.
 */
export function instrumentKubeConfig(kc: KubeConfig, metrics: RestClientMetrics): KubeConfig {
  const apply = kc.applySecurityAuthentication.bind(kc);
  const wrapped = new WeakMap<Dispatcher, Dispatcher>();
  kc.applySecurityAuthentication = async (context: RequestContext): Promise<void> => {
    await apply(context);
    const base = (context.getDispatcher() as Dispatcher | undefined) ?? getGlobalDispatcher();
    let measured = wrapped.get(base);
    if (!measured) {
      measured = base.compose(measureRequests(metrics));
      wrapped.set(base, measured);
    }
    context.setDispatcher(measured as Parameters<RequestContext['setDispatcher']>[0]);
  };
  return kc;
}

function measureRequests(metrics: RestClientMetrics): Dispatcher.DispatcherComposeInterceptor {
  return (dispatch) => (options, handler) => {
    const host = hostOf(options.origin);
    const method = (options.method ?? 'GET').toUpperCase();
    const started = performance.now();
    let recorded = false;
    const record = (code: number | '<error>') => {
      if (recorded) return;
      recorded = true;
      metrics.observe(method, host, code, (performance.now() - started) / 1000);
    };
    return dispatch(options, new MeasuringHandler(handler, record));
  };
}

/** Passes every callback through and records the first final status (or the error). */
class MeasuringHandler implements Dispatcher.DispatchHandler {
  constructor(
    private readonly inner: Dispatcher.DispatchHandler,
    private readonly record: (code: number | '<error>') => void,
  ) {}

  onRequestStart(controller: Dispatcher.DispatchController, context: unknown): void {
    this.inner.onRequestStart?.(controller, context);
  }

  onRequestUpgrade(
    ...args: Parameters<NonNullable<Dispatcher.DispatchHandler['onRequestUpgrade']>>
  ): void {
    this.record(args[1]);
    this.inner.onRequestUpgrade?.(...args);
  }

  onResponseStarted(): void {
    this.inner.onResponseStarted?.();
  }

  onResponseStart(
    controller: Dispatcher.DispatchController,
    statusCode: number,
    headers: ResponseHeaders,
    statusMessage?: string,
  ): void {
    // 1xx interim responses precede the real one.
    if (statusCode >= 200) this.record(statusCode);
    this.inner.onResponseStart?.(controller, statusCode, headers, statusMessage);
  }

  onResponseData(controller: Dispatcher.DispatchController, chunk: Buffer): void {
    this.inner.onResponseData?.(controller, chunk);
  }

  onResponseEnd(controller: Dispatcher.DispatchController, trailers: ResponseHeaders): void {
    this.inner.onResponseEnd?.(controller, trailers);
  }

  onResponseError(controller: Dispatcher.DispatchController, error: Error): void {
    this.record('<error>');
    this.inner.onResponseError?.(controller, error);
  }

  onBodySent(chunk: Buffer): void {
    this.inner.onBodySent?.(chunk);
  }

  onRequestSent(): void {
    this.inner.onRequestSent?.();
  }
}

function hostOf(origin: string | URL | undefined): string {
  if (origin === undefined) return '';
  return (typeof origin === 'string' ? new URL(origin) : origin).host;
}
