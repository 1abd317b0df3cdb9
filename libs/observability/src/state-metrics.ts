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
  return value.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\n/g, '\\n');
}

function helpText(help: string): string {
  return help.replace(/\\/g, '\\\\').replace(/\n/g, '\\n');
}

function sampleValue(value: number): string {
  if (Number.isNaN(value)) return 'NaN';
  if (value === Infinity) return '+Inf';
  if (value === -Infinity) return '-Inf';
  return String(value);
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
    lines.push(`# HELP ${family.name} ${helpText(family.help)}`, `# TYPE ${family.name} gauge`);
    for (const { labels, value } of family.samples) {
      const set = Object.entries(labels)
        .map(([key, v]) => `${key}="${labelValue(v)}"`)
        .join(',');
      lines.push(`${family.name}${set ? `{${set}}` : ''} ${sampleValue(value)}`);
    }
  }
  return lines.length === 0 ? '' : `${lines.join('\n')}\n`;
}
