/** The logging the library needs; the observability Logger (JSON lines) satisfies it. */
export type LogFields = Readonly<Record<string, unknown>>;

export interface Log {
  debug(msg: string, fields?: LogFields): void;
  info(msg: string, fields?: LogFields): void;
  warn(msg: string, fields?: LogFields): void;
  error(msg: string, fields?: LogFields): void;
}

const ignore = (): void => {};
export const silentLog: Log = { debug: ignore, info: ignore, warn: ignore, error: ignore };

export function errorFields(err: unknown): LogFields {
  if (err instanceof Error) {
    const code = (err as { code?: unknown }).code;
    return { error: err.message, ...(code === undefined ? {} : { code }) };
  }
  return { error: String(err) };
}
