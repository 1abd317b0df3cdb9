import { HttpMethod, RequestContext, type KubeConfig } from '@kubernetes/client-node';
import { fetch, request, type Dispatcher } from 'undici';
import { deadline } from './deadline.js';
import { parseRetryAfter } from './retry-after.js';

export type Query = Readonly<Record<string, string | number | boolean | undefined>>;

export interface RequestOptions {
  readonly method?: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
  readonly path: string;
  readonly query?: Query;
  readonly body?: unknown;
  readonly accept?: string;
  readonly contentType?: string;
  /** Client-side limit for the whole request; defaults to the client's. Not for streams. */
  readonly timeoutMs?: number;
  readonly signal?: AbortSignal;
}

/** The API server's `Status` for a failed request. */
export interface Status {
  readonly kind?: string;
  readonly code?: number;
  readonly reason?: string;
  readonly message?: string;
}

/** A non-2xx answer of the API server, with its Status reason (NotFound, Conflict, Expired, …). */
export class KubeApiError extends Error {
  constructor(
    readonly code: number,
    readonly reason: string | undefined,
    message: string,
    /** How long the server asked the client to wait (Retry-After, with 429 and 503). */
    readonly retryAfterMs?: number,
  ) {
    super(message);
    this.name = 'KubeApiError';
  }
}

export function isApiError(err: unknown, code?: number): err is KubeApiError {
  return err instanceof KubeApiError && (code === undefined || err.code === code);
}

/**
 * A thin REST client over client-node's own request machinery: `applySecurityAuthentication`
 * supplies the credentials and TLS dispatcher (and whatever instruments it, such as the
 * rest_client metrics), and undici sends. Used instead of the generated APIs because they cannot
 * do what the watcher needs (set Accept for metadata-only lists and watches, ask for bookmarks,
 * stream watch lines under our own inactivity watchdog) and cost what the worker cannot afford:
 * every answer rebuilt into model classes, every request through fetch.
 */
export class RestClient {
  readonly server: string;

  constructor(
    private readonly kc: KubeConfig,
    private readonly defaultTimeoutMs = 30_000,
    /** Sent with every request, e.g. a User-Agent that names the writer. */
    private readonly headers: Readonly<Record<string, string>> = {},
  ) {
    const cluster = kc.getCurrentCluster();
    if (!cluster) throw new Error('the kubeconfig has no current cluster');
    this.server = cluster.server.replace(/\/+$/, '');
  }

  /**
   * Sends one request and parses the JSON answer; throws KubeApiError on a non-2xx status.
   * undici's `request`, not its `fetch`: the WHATWG Request, Headers and body streams that fetch
   * builds cost 0.3–0.45 ms of CPU per call, which a worker pays on every write.
   */
  async request<T>(options: RequestOptions): Promise<T> {
    const limit = deadline(options.signal, options.timeoutMs ?? this.defaultTimeoutMs);
    let text: string;
    let response: Dispatcher.ResponseData;
    try {
      const { url, init } = await this.prepare(options, limit.signal);
      response = await request(url, init);
      text = await response.body.text();
    } finally {
      limit.done();
    }
    if (response.statusCode < 200 || response.statusCode >= 300) {
      const retryAfter = response.headers['retry-after'];
      throw errorFrom(
        response.statusCode,
        text,
        Array.isArray(retryAfter) ? retryAfter[0] : retryAfter,
      );
    }
    return (text ? JSON.parse(text) : undefined) as T;
  }

  /**
   * Opens a streaming request (a watch); resolves once the headers arrived with 200, and the
   * caller reads the body until it ends or `options.signal` aborts it. No overall timeout: the
   * caller bounds the stream's silence.
   */
  async stream(options: RequestOptions): Promise<ReadableStream<Uint8Array>> {
    const { url, init } = await this.prepare(options, options.signal);
    const response = await fetch(url, init);
    if (!response.ok || !response.body) {
      const text = await response.text();
      throw errorFrom(response.status, text, response.headers.get('retry-after') ?? undefined);
    }
    return response.body;
  }

  private async prepare(options: RequestOptions, signal: AbortSignal | undefined) {
    const url = new URL(this.server + options.path);
    for (const [name, value] of Object.entries(options.query ?? {})) {
      if (value !== undefined) url.searchParams.set(name, String(value));
    }
    const method = options.method ?? 'GET';
    const context = new RequestContext(url.toString(), HttpMethod[method]);
    await this.kc.applySecurityAuthentication(context);
    const headers: Record<string, string> = {
      ...this.headers,
      ...context.getHeaders(),
      accept: options.accept ?? 'application/json',
    };
    if (options.body !== undefined)
      headers['content-type'] = options.contentType ?? 'application/json';
    const init = {
      method,
      headers,
      body: options.body === undefined ? undefined : JSON.stringify(options.body),
      dispatcher: context.getDispatcher() as Dispatcher | undefined,
      signal,
    };
    return { url, init };
  }
}

function errorFrom(code: number, text: string, retryAfter: string | undefined): KubeApiError {
  let status: Status = {};
  try {
    status = JSON.parse(text) as Status;
  } catch {
    // Not a Status (a proxy's HTML page, an empty body): the HTTP code is all there is.
  }
  return new KubeApiError(
    code,
    status.reason,
    status.message ?? (text.slice(0, 200) || `HTTP ${code}`),
    parseRetryAfter(retryAfter),
  );
}
