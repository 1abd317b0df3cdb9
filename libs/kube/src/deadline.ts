/** A signal for one request: the caller's, bounded by a time limit, and `done` once it ended. */
export interface Deadline {
  readonly signal: AbortSignal | undefined;
  /** The request ended: drops the timer and the link to the caller's signal. */
  done(): void;
}

/**
 * Aborts when `signal` does (with its reason) or after `timeoutMs` (with a TimeoutError).
 *
 * Not `AbortSignal.any([signal, AbortSignal.timeout(ms)])`: the timeout's timer cannot be
 * cleared, so it keeps both signals alive for the whole limit however soon the request ended,
 * about 1.7 KB a request (33.5 MB after a full GC for 20,000 requests with a 30 s limit), and
 * building the pair costs 13–21 µs against 3–7 µs here. A worker sends hundreds a second.
 */
export function deadline(signal: AbortSignal | undefined, timeoutMs: number | undefined): Deadline {
  if (!timeoutMs) return { signal, done: () => undefined };
  const controller = new AbortController();
  const timer = setTimeout(
    () => controller.abort(new DOMException('the request timed out', 'TimeoutError')),
    Math.max(1, Math.ceil(timeoutMs)),
  );
  const follow = () => controller.abort(signal?.reason);
  if (signal?.aborted) follow();
  else signal?.addEventListener('abort', follow, { once: true });
  return {
    signal: controller.signal,
    done: () => {
      clearTimeout(timer);
      signal?.removeEventListener('abort', follow);
    },
  };
}
