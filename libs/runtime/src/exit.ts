/** How long a reader that never drains the pipe may hold the exit. */
const FLUSH_LIMIT_MS = 5_000;

/**
 * Exits once stdout and stderr have handed every pending line to the OS. Writes to a pipe can be
 * queued in the process when the reader (the container runtime, a test) falls behind, and
 * `process.exit` drops them: the lines that say why the process exits would be the ones lost.
 */
export function exitAfterFlush(code: number): Promise<never> {
  process.exitCode = code;
  let pending = 2;
  const flushed = () => {
    if (--pending === 0) process.exit(code);
  };
  process.stdout.write('', flushed);
  process.stderr.write('', flushed);
  setTimeout(() => process.exit(code), FLUSH_LIMIT_MS).unref();
  // Never settles: a caller that awaits it goes no further while the lines drain.
  return new Promise<never>(() => undefined);
}
