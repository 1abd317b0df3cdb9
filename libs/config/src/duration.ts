// Go's time.ParseDuration grammar, so durations read the same here as in client-go and
// controller-runtime flags and in the Helm values people copy from Go operators.
const UNIT_MS: Readonly<Record<string, number>> = {
  ns: 1e-6,
  us: 1e-3,
  µs: 1e-3,
  μs: 1e-3,
  ms: 1,
  s: 1000,
  m: 60_000,
  h: 3_600_000,
};

// µs (micro sign) and μs (Greek mu) as escapes: the app bundles stay ASCII (scripts/bundle.mjs).
const TERM = /(\d+(?:\.\d*)?|\.\d+)(ns|us|\u00b5s|\u03bcs|ms|s|m|h)/y;

/** Parses `300ms`, `1.5h`, `2h45m` into milliseconds; returns undefined when the text is not a duration. */
export function parseDuration(text: string): number | undefined {
  let rest = text.trim();
  let sign = 1;
  if (rest.startsWith('-') || rest.startsWith('+')) {
    sign = rest.startsWith('-') ? -1 : 1;
    rest = rest.slice(1);
  }
  if (rest === '0') return 0;
  if (rest === '') return undefined;
  let total = 0;
  TERM.lastIndex = 0;
  while (TERM.lastIndex < rest.length) {
    const match = TERM.exec(rest);
    if (!match) return undefined;
    total += Number(match[1]) * (UNIT_MS[match[2] as string] as number);
  }
  return sign * total;
}

/** Renders milliseconds the way Go prints a time.Duration (`1h0m0s` is shortened to `1h`). */
export function formatDuration(ms: number): string {
  if (ms === 0) return '0s';
  if (ms < 1000) return `${ms}ms`;
  const parts: string[] = [];
  let rest = ms;
  for (const [unit, size] of [
    ['h', 3_600_000],
    ['m', 60_000],
  ] as const) {
    const whole = Math.floor(rest / size);
    if (whole > 0) parts.push(`${whole}${unit}`);
    rest -= whole * size;
  }
  if (rest > 0) parts.push(`${rest / 1000}s`);
  return parts.join('');
}
