import { isIP } from 'node:net';
import { parseDuration } from './duration.js';

/** Every invalid variable found at start, so one failed start-up shows all of them at once. */
export class ConfigError extends Error {
  constructor(readonly problems: readonly string[]) {
    super(problems.join('; '));
    this.name = 'ConfigError';
  }
}

export type Env = Readonly<Record<string, string | undefined>>;

interface Range {
  readonly min: number;
  readonly max: number;
}

/**
 * Reads typed values from environment variables and records one problem per bad variable,
 * each naming the variable, what it accepts and what it got. An empty value means unset so that
 * `FOO=` in docker-compose or a blank Helm value falls back to the default.
 */
export class EnvReader {
  private readonly problems: string[] = [];

  constructor(private readonly env: Env) {}

  raw(name: string): string | undefined {
    const value = this.env[name]?.trim();
    return value === '' ? undefined : value;
  }

  /** Records that `name` holds `got` instead of `expected`; returns `fallback` so parsing goes on. */
  fail<T>(name: string, expected: string, got: string, fallback: T): T {
    this.problems.push(`${name} must be ${expected}, got ${JSON.stringify(got)}`);
    return fallback;
  }

  /** A problem that involves several variables at once and so has no single "got". */
  conflict(message: string): void {
    this.problems.push(message);
  }

  string(name: string, fallback: string, pattern?: RegExp, expected = 'a valid value'): string {
    const value = this.raw(name);
    if (value === undefined) return fallback;
    if (pattern && !pattern.test(value)) return this.fail(name, expected, value, fallback);
    return value;
  }

  integer(name: string, fallback: number, range: Range): number {
    const value = this.raw(name);
    if (value === undefined) return fallback;
    const parsed = /^[+-]?\d+$/.test(value) ? Number(value) : NaN;
    if (!Number.isSafeInteger(parsed) || parsed < range.min || parsed > range.max) {
      return this.fail(name, `an integer from ${range.min} to ${range.max}`, value, fallback);
    }
    return parsed;
  }

  port(name: string, fallback: number): number {
    return this.integer(name, fallback, { min: 1, max: 65535 });
  }

  /** Milliseconds from a Go-style duration; `min` keeps e.g. a zero lease duration out. */
  duration(name: string, fallback: string, min = 1): number {
    const fallbackMs = parseDuration(fallback) as number;
    const value = this.raw(name);
    if (value === undefined) return fallbackMs;
    const parsed = parseDuration(value);
    if (parsed === undefined || parsed < min) {
      const floor = min <= 0 ? '' : ` of at least ${min}ms`;
      return this.fail(
        name,
        `a duration${floor} such as "500ms", "15s" or "10h"`,
        value,
        fallbackMs,
      );
    }
    return parsed;
  }

  oneOf<T extends string>(name: string, values: readonly T[], fallback: T): T {
    const value = this.raw(name)?.toLowerCase();
    if (value === undefined) return fallback;
    if (!(values as readonly string[]).includes(value)) {
      return this.fail(name, `one of ${values.join('|')}`, this.raw(name) as string, fallback);
    }
    return value as T;
  }

  /** A comma-separated list; every item must match `pattern`. Empty → []. */
  list(name: string, pattern: RegExp, expected: string): string[] {
    const value = this.raw(name);
    if (value === undefined) return [];
    const items = value
      .split(',')
      .map((item) => item.trim())
      .filter((item) => item !== '');
    const bad = items.find((item) => !pattern.test(item));
    if (bad !== undefined) return this.fail(name, expected, bad, []);
    return [...new Set(items)];
  }

  bindAddress(name: string, fallback: string): string {
    const value = this.raw(name);
    if (value === undefined) return fallback;
    if (isIP(value) === 0 && value !== 'localhost') {
      return this.fail(name, 'an IP address such as 0.0.0.0, 127.0.0.1 or ::', value, fallback);
    }
    return value;
  }

  /** Throws the ConfigError naming every bad variable, if any. */
  finish(): void {
    if (this.problems.length > 0) throw new ConfigError(this.problems);
  }
}

/** RFC 1123 label: namespace names. */
export const DNS_LABEL = /^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/;
/** RFC 1123 subdomain: names of Leases and most other objects. */
export const DNS_SUBDOMAIN =
  /^(?=.{1,253}$)[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
