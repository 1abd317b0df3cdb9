/** One sample of a gauge: its labels and value. */
export interface GaugeSample {
  readonly labels: Readonly<Record<string, string>>;
  readonly value: number;
}

/** A gauge family computed at scrape time (kube-state-metrics style: from objects, not events). */
export interface GaugeFamily {
  readonly name: string;
  readonly help: string;
  /** May be produced as they are read, so a large family is never held whole. */
  readonly samples: Iterable<GaugeSample>;
}

/** Lines per chunk of a streamed exposition: large enough that writes are few, small enough to be cheap to hold. */
const CHUNK_LINES = 1000;

/** Prometheus text format 0.0.4: backslash, double quote and newline are escaped in label values. */
function labelValue(value: string): string {
  // Most values need no escape; the test spares three replacements on every line of a scrape.
  if (!NEEDS_ESCAPE.test(value)) return value;
  return value.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\n/g, '\\n');
}

const NEEDS_ESCAPE = /[\\"\n]/;

function helpText(help: string): string {
  return help.replace(/\\/g, '\\\\').replace(/\n/g, '\\n');
}

function sampleValue(value: number): string {
  if (Number.isNaN(value)) return 'NaN';
  if (value === Infinity) return '+Inf';
  if (value === -Infinity) return '-Inf';
  return String(value);
}

/** `# HELP` and `# TYPE` lines of a gauge family. */
function gaugeFamilyHeader(name: string, help: string): string[] {
  return [`# HELP ${name} ${helpText(help)}`, `# TYPE ${name} gauge`];
}

/** One sample line, `name{label="value",…} value`. */
function gaugeSampleLine(name: string, { labels, value }: GaugeSample): string {
  let set = '';
  for (const key in labels) set += `${set && ','}${key}="${labelValue(labels[key] as string)}"`;
  return `${name}${set ? `{${set}}` : ''} ${sampleValue(value)}`;
}

/** Lines joined into an exposition: empty, or newline-terminated. */
function linesText(lines: readonly string[]): string {
  return lines.length === 0 ? '' : `${lines.join('\n')}\n`;
}

/**
 * Gauge families in the Prometheus text format, in newline-terminated chunks of at most
 * CHUNK_LINES lines, made as they are read: a source with tens of thousands of series is written
 * to the scraper chunk by chunk instead of being built as one text first. A family with no
 * samples is left out entirely, so a process with nothing to say (a standby) exports no series
 * and no empty family.
 */
export function* gaugeFamilyChunks(families: Iterable<GaugeFamily>): Generator<string> {
  let lines: string[] = [];
  for (const family of families) {
    let headed = false;
    for (const sample of family.samples) {
      if (!headed) lines.push(...gaugeFamilyHeader(family.name, family.help));
      headed = true;
      lines.push(gaugeSampleLine(family.name, sample));
      if (lines.length >= CHUNK_LINES) {
        yield linesText(lines);
        lines = [];
      }
    }
  }
  if (lines.length > 0) yield linesText(lines);
}

/** Gauge families as one text (see gaugeFamilyChunks), for sources that are small. */
export function gaugeFamiliesText(families: Iterable<GaugeFamily>): string {
  return [...gaugeFamilyChunks(families)].join('');
}
