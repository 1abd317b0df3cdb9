import type { LoggerService } from '@nestjs/common';
import type { Level, Logger } from './logger.js';

/**
 * Routes NestJS's own log calls (`log(message, context)`, `error(message, stack, context)`) into
 * the JSON logger, so the framework's lines are JSON like every other line; Nest's context
 * becomes the `logger` field.
 */
export class NestJsonLogger implements LoggerService {
  constructor(private readonly logger: Logger) {}

  log(message: unknown, ...params: unknown[]): void {
    this.forward('info', message, params);
  }

  error(message: unknown, ...params: unknown[]): void {
    this.forward('error', message, params);
  }

  warn(message: unknown, ...params: unknown[]): void {
    this.forward('warn', message, params);
  }

  debug(message: unknown, ...params: unknown[]): void {
    this.forward('debug', message, params);
  }

  verbose(message: unknown, ...params: unknown[]): void {
    this.forward('debug', message, params);
  }

  fatal(message: unknown, ...params: unknown[]): void {
    this.forward('error', message, params);
  }

  private forward(level: Level, message: unknown, params: unknown[]): void {
    if (!this.logger.enabled(level)) return;
    // Nest passes the context last; error() also passes a stack string before it.
    // A lone string that is a stack trace is a stack, not a context (as Nest's ConsoleLogger reads it).
    const rest = [...params];
    const last = rest.at(-1);
    const context = typeof last === 'string' && !isStack(last) ? rest.pop() : undefined;
    const fields: Record<string, unknown> = { logger: context };
    if (typeof rest[0] === 'string' && (level === 'error' || isStack(rest[0]))) {
      fields.stack = rest.shift();
    }
    if (rest.length > 0) fields.details = rest;
    if (message instanceof Error) {
      this.logger.write(level, message.message, { ...fields, err: message });
    } else if (typeof message === 'string') {
      this.logger.write(level, message, fields);
    } else {
      this.logger.write(level, 'nest', { ...fields, details: message });
    }
  }
}

function isStack(text: string): boolean {
  return /\n\s+at /.test(text);
}
