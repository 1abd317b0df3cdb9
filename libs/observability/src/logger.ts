export const LEVELS = ['debug', 'info', 'warn', 'error'] as const;
export type Level = (typeof LEVELS)[number];
export type LogFields = Readonly<Record<string, unknown>>;
/** Receives one complete JSON line (without the newline). */
export type LogSink = (line: string) => void;

export interface LoggerOptions {
  readonly level?: Level;
  readonly fields?: LogFields;
  readonly sink?: LogSink;
  readonly clock?: () => Date;
}

const RESERVED = new Set(['time', 'level', 'msg']);

/** Writes without waiting; a pipe may queue lines, so exits go through exitAfterFlush. */
const stdoutSink: LogSink = (line) => {
  process.stdout.write(`${line}\n`);
};

export const stderrSink: LogSink = (line) => {
  process.stderr.write(`${line}\n`);
};

/**
 * Structured logger: one JSON object per line with `time`, `level`, `msg` and the fields of the
 * logger and the call (`controller`, `key`, `reconcileID`, …). Child loggers carry fields so a
 * reconcile's every line names its key without each call repeating it.
 */
export class Logger {
  private readonly minimum: number;
  private readonly fields: LogFields;
  private readonly sink: LogSink;
  private readonly clock: () => Date;

  constructor(private readonly options: LoggerOptions = {}) {
    this.minimum = LEVELS.indexOf(options.level ?? 'info');
    this.fields = options.fields ?? {};
    this.sink = options.sink ?? stdoutSink;
    this.clock = options.clock ?? (() => new Date());
  }

  child(fields: LogFields): Logger {
    return new Logger({ ...this.options, fields: { ...this.fields, ...fields } });
  }

  enabled(level: Level): boolean {
    return LEVELS.indexOf(level) >= this.minimum;
  }

  debug(msg: string, fields?: LogFields): void {
    this.write('debug', msg, fields);
  }

  info(msg: string, fields?: LogFields): void {
    this.write('info', msg, fields);
  }

  warn(msg: string, fields?: LogFields): void {
    this.write('warn', msg, fields);
  }

  error(msg: string, fields?: LogFields): void {
    this.write('error', msg, fields);
  }

  write(level: Level, msg: string, fields: LogFields = {}): void {
    if (!this.enabled(level)) return;
    const entry: Record<string, unknown> = { time: this.clock().toISOString(), level, msg };
    for (const source of [this.fields, fields]) {
      for (const [key, value] of Object.entries(source)) {
        if (!RESERVED.has(key) && value !== undefined) entry[key] = value;
      }
    }
    this.sink(stringify(entry));
  }
}

/** JSON that never throws: errors keep message and stack, bigints become strings, cycles are cut. */
function stringify(entry: Record<string, unknown>): string {
  const seen = new WeakSet<object>();
  return JSON.stringify(entry, (_key, value: unknown) => {
    if (value instanceof Error) return serializeError(value);
    if (typeof value === 'bigint') return value.toString();
    if (value !== null && typeof value === 'object') {
      if (seen.has(value)) return '[Circular]';
      seen.add(value);
    }
    return value;
  });
}

function serializeError(error: Error): Record<string, unknown> {
  const extra = error as Error & { code?: unknown; statusCode?: unknown; cause?: unknown };
  return {
    name: error.name,
    message: error.message,
    ...(extra.code !== undefined && { code: extra.code }),
    ...(extra.statusCode !== undefined && { statusCode: extra.statusCode }),
    stack: error.stack,
    ...(extra.cause !== undefined && { cause: extra.cause }),
  };
}
