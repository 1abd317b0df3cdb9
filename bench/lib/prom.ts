/** One sample of the Prometheus text exposition format. */
export interface Sample {
  readonly name: string;
  readonly labels: Readonly<Record<string, string>>;
  readonly value: number;
}

const LINE = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})?\s+(\S+)/;
const LABEL = /([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g;

export function parseMetrics(text: string): Sample[] {
  const out: Sample[] = [];
  for (const line of text.split('\n')) {
    if (line === '' || line.startsWith('#')) continue;
    const m = LINE.exec(line);
    if (!m) continue;
    const labels: Record<string, string> = {};
    for (const l of (m[2] ?? '').matchAll(LABEL)) {
      labels[l[1] as string] = (l[2] as string).replace(/\\(.)/g, (_, c: string) =>
        c === 'n' ? '\n' : c,
      );
    }
    out.push({ name: m[1] as string, labels, value: parseValue(m[3] as string) });
  }
  return out;
}

function parseValue(s: string): number {
  if (s === '+Inf') return Infinity;
  if (s === '-Inf') return -Infinity;
  return Number(s);
}

function matches(sample: Sample, want: Record<string, string>): boolean {
  return Object.entries(want).every(([k, v]) => sample.labels[k] === v);
}

/** Sum of every series of a metric whose labels include `labels` (a counter or gauge total). */
export function sumOf(samples: readonly Sample[], name: string, labels = {}): number {
  return samples
    .filter((s) => s.name === name && matches(s, labels))
    .reduce((a, s) => a + s.value, 0);
}

/** Cumulative bucket counts by upper bound, summed over every matching series. */
export type Buckets = Map<number, number>;

export function bucketsOf(samples: readonly Sample[], name: string, labels = {}): Buckets {
  const out: Buckets = new Map();
  for (const s of samples) {
    if (s.name !== `${name}_bucket` || !matches(s, labels)) continue;
    const le = parseValue(s.labels.le ?? '+Inf');
    out.set(le, (out.get(le) ?? 0) + s.value);
  }
  return out;
}

/** Buckets of several processes added together, as Prometheus' sum by (le) does. */
export function addBuckets(all: readonly Buckets[]): Buckets {
  const out: Buckets = new Map();
  for (const b of all) for (const [le, n] of b) out.set(le, (out.get(le) ?? 0) + n);
  return out;
}

/** What was observed between two scrapes of the same histogram (after minus before). */
export function diffBuckets(after: Buckets, before: Buckets): Buckets {
  const out: Buckets = new Map();
  for (const [le, n] of after) out.set(le, n - (before.get(le) ?? 0));
  return out;
}

function bucketCount(b: Buckets): number {
  return b.get(Infinity) ?? Math.max(0, ...b.values());
}

/** Fraction of observations at or below `le`, which must be one of the bucket bounds. */
export function fractionAtMost(b: Buckets, le: number): number {
  const total = bucketCount(b);
  return total === 0 ? Number.NaN : (b.get(le) ?? Number.NaN) / total;
}

/**
 * PromQL's histogram_quantile: linear interpolation inside the bucket the rank falls in. Only as
 * fine as the buckets (client-go's workqueue buckets grow by 10×), so reports pair it with
 * fractionAtMost at the SLO's bound.
 */
export function histogramQuantile(q: number, b: Buckets): number {
  const bounds = [...b.keys()].sort((x, y) => x - y);
  const total = bucketCount(b);
  if (total === 0) return Number.NaN;
  const rank = q * total;
  let prevBound = 0;
  let prevCount = 0;
  for (const le of bounds) {
    const count = b.get(le) as number;
    if (count >= rank) {
      if (le === Infinity) return prevBound;
      if (count === prevCount) return le;
      return prevBound + ((le - prevBound) * (rank - prevCount)) / (count - prevCount);
    }
    prevBound = le;
    prevCount = count;
  }
  return prevBound;
}

export async function scrape(url: string): Promise<Sample[]> {
  const res = await fetch(url);
  if (!res.ok) throw new Error(`GET ${url}: ${res.status}`);
  return parseMetrics(await res.text());
}
