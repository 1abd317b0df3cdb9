/** One sample of a gauge: its labels and value. */
export interface GaugeSample {
  readonly labels: Readonly<Record<string, string>>;
  readonly value: number;
}

/** A gauge family computed at scrape time (kube-state-metrics style: from objects, not events). */
export interface GaugeFamily {
  readonly name: string;
  readonly help: string;
  readonly samples: readonly GaugeSample[];
}

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
 * Gauge families in the Prometheus text format, for a MetricsTextSource. A family with no
 * samples is left out entirely, so a process with nothing to say (a standby) exports no series
 * and no empty family.
 */
export function gaugeFamiliesText(families: readonly GaugeFamily[]): string {
  const lines: string[] = [];
  for (const family of families) {
    if (family.samples.length === 0) continue;
    lines.push(...gaugeFamilyHeader(family.name, family.help));
    for (const sample of family.samples) lines.push(gaugeSampleLine(family.name, sample));
  }
  return linesText(lines);
}
