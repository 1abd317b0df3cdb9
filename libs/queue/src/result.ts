/**
 * What a handler returns (controller-runtime reconcile.Result). Nothing or `{}` means done (the
 * key's failure count is reset); `requeueAfter` runs the key again after that many ms unless an
 * event makes it due earlier (the failure count is reset too). A thrown error backs off per key;
 * a thrown TerminalError does not requeue.
 */
export type HandlerResult = void | undefined | { requeueAfter?: number };

/** An error that retrying cannot fix (controller-runtime reconcile.TerminalError). */
export class TerminalError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'TerminalError';
  }
}

export function isTerminalError(err: unknown): boolean {
  return err instanceof TerminalError || (err as Error | undefined)?.name === 'TerminalError';
}

/** The reason a run's AbortSignal fires when another consumer may now hold its key. */
export class LeaseLostError extends Error {
  constructor(readonly key: string) {
    super(`lease of ${key} was lost; another consumer may be running it`);
    this.name = 'LeaseLostError';
  }
}

/** The reason a run's AbortSignal fires when its consumer shuts down. */
export class ShutdownError extends Error {
  constructor() {
    super('queue consumer is shutting down');
    this.name = 'ShutdownError';
  }
}
