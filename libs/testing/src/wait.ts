/** What a probe returns when the thing waited for has not happened yet. */
type NotYet = false | 0 | '' | null | undefined;

/**
 * Polls `probe` until `done` accepts its value or `timeoutMs` passes, and resolves either way with
 * the last value: a run that hits its cap can still report how far it got. A probe that throws
 * ends the wait with its error.
 */
export async function waitFor<T>(
  probe: () => T | Promise<T>,
  done: (value: T) => boolean,
  timeoutMs: number,
  intervalMs = 100,
): Promise<{ value: T; finished: boolean }> {
  const deadline = Date.now() + timeoutMs;
  // The pause grows to intervalMs: a change that is milliseconds away is seen at once, and a
  // probe that is costly (a kubectl run, a metrics scrape) is not repeated in a tight loop.
  for (let pauseMs = Math.min(10, intervalMs); ; pauseMs = Math.min(pauseMs * 2, intervalMs)) {
    const value = await probe();
    if (done(value)) return { value, finished: true };
    if (Date.now() > deadline) return { value, finished: false };
    await new Promise((resolve) => setTimeout(resolve, pauseMs));
  }
}

/**
 * Polls until `probe` returns something truthy, and resolves with it; a thrown error counts as
 * not yet. Fails after `timeoutMs` naming `what` and the last error: convergence is asserted
 * without fixed sleeps. `what` may be a function, to describe the state at the time of failure.
 */
export async function eventually<T>(
  what: string | (() => string),
  probe: () => T | Promise<T>,
  timeoutMs = 30_000,
  intervalMs = 100,
): Promise<Exclude<T, NotYet>> {
  let lastError: unknown;
  const attempt = async (): Promise<T | undefined> => {
    try {
      return await probe();
    } catch (err) {
      lastError = err;
      return undefined;
    }
  };
  const { value, finished } = await waitFor(attempt, (v) => Boolean(v), timeoutMs, intervalMs);
  if (finished) return value as Exclude<T, NotYet>;
  const description = typeof what === 'string' ? what : what();
  throw new Error(
    `timed out after ${timeoutMs} ms waiting for ${description}` +
      (lastError ? ` (last error: ${String(lastError)})` : ''),
  );
}
