/**
 * Polls until `probe` returns something other than undefined/false (a thrown error counts as not
 * yet), or fails naming `what` and the last error: async convergence without fixed sleeps.
 */
export async function eventually<T>(
  what: string,
  probe: () => T | undefined | false | Promise<T | undefined | false>,
  timeoutMs = 30_000,
  intervalMs = 150,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let lastError: unknown;
  for (;;) {
    try {
      const value = await probe();
      if (value !== undefined && value !== false) return value;
    } catch (err) {
      lastError = err;
    }
    if (Date.now() > deadline) {
      throw new Error(
        `timed out after ${timeoutMs} ms waiting for ${what}` +
          (lastError ? ` (last error: ${String(lastError)})` : ''),
      );
    }
    await new Promise((r) => setTimeout(r, intervalMs));
  }
}
