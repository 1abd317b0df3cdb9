/**
 * What one reconcile asks of the queue, named after controller-runtime's reconcile.Result:
 * done (Forget), RequeueAfter (AddAfter, failures reset), error (AddRateLimited, backoff) and
 * terminal (TerminalError: no requeue until an event brings the key back).
 */
export type Result =
  | { readonly kind: 'done' }
  | { readonly kind: 'requeueAfter'; readonly delayMs: number }
  | { readonly kind: 'error'; readonly error: Error }
  | { readonly kind: 'terminal'; readonly reason: string };

export const done: Result = { kind: 'done' };

export function requeueAfter(delayMs: number): Result {
  return { kind: 'requeueAfter', delayMs: Math.max(0, Math.ceil(delayMs)) };
}

export function terminal(reason: string): Result {
  return { kind: 'terminal', reason };
}

/** The sooner of two outcomes that both ask to come back later; done never wins over a requeue. */
export function sooner(a: Result, b: Result): Result {
  if (a.kind !== 'requeueAfter') return b.kind === 'requeueAfter' ? b : a;
  if (b.kind !== 'requeueAfter') return a;
  return a.delayMs <= b.delayMs ? a : b;
}
