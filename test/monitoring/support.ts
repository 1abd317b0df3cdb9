import { readFileSync } from 'node:fs';
import { CHART, findObject, renderChart } from '../deploy/support/helm.js';

/** One alerting rule as the chart renders it. */
export interface AlertRule {
  readonly alert: string;
  readonly expr: string;
  readonly for?: string;
  readonly labels?: Record<string, string>;
  readonly annotations: Record<string, string>;
}

export interface RuleGroups {
  readonly groups: readonly { readonly name: string; readonly rules: readonly AlertRule[] }[];
}

/** The PrometheusRule's groups for release backup-operator, in Prometheus' rule file shape. */
export function renderedRuleGroups(sets: readonly string[] = []): RuleGroups {
  const objects = renderChart([], ['metrics.prometheusRule.enabled=true', ...sets]);
  const rule = findObject(objects, 'PrometheusRule', 'backup-operator');
  return (rule as unknown as { spec: RuleGroups }).spec;
}

export function alertRules(groups: RuleGroups): AlertRule[] {
  return groups.groups.flatMap((g) => g.rules);
}

/** The job labels the chart's ServiceMonitor gives the two processes (the Services' names). */
export const JOBS = {
  watcher: 'backup-operator-watcher-metrics',
  worker: 'backup-operator-worker-metrics',
} as const;

/**
 * What an alert measures: its expression without the final comparison with a constant, and
 * absent(x) as x. Every alert is written that way, so on a healthy system the signal returns
 * series while the alert itself returns none. Throws for an expression of another shape.
 */
export function alertSignal(expr: string): string {
  const oneLine = expr.replace(/\s+/g, ' ').trim();
  const absent = /^absent\((.*)\)$/.exec(oneLine);
  if (absent) return absent[1]!;
  const compared = /^(.*\S)\s*(==|!=|>=|<=|>|<)\s*-?[0-9.]+(e[+-]?\d+)?$/.exec(oneLine);
  if (!compared) throw new Error(`alert expression is not "<signal> <op> <constant>": ${expr}`);
  return compared[1]!;
}

export interface DashboardPanel {
  readonly type: string;
  readonly title: string;
  readonly gridPos: {
    readonly h: number;
    readonly w: number;
    readonly x: number;
    readonly y: number;
  };
  readonly fieldConfig?: { readonly defaults?: { readonly unit?: string } };
  readonly targets?: readonly {
    readonly expr: string;
    readonly legendFormat?: string;
    readonly refId: string;
    readonly instant?: boolean;
  }[];
}

export interface Dashboard {
  readonly title: string;
  readonly panels: readonly DashboardPanel[];
  readonly templating: {
    readonly list: readonly {
      readonly name: string;
      readonly type: string;
      readonly query?: unknown;
    }[];
  };
}

const DASHBOARD_FILE = `${CHART}/dashboards/backupjob-operator.json`;

export function dashboard(): Dashboard {
  return JSON.parse(readFileSync(DASHBOARD_FILE, 'utf8')) as Dashboard;
}

/**
 * A panel query as Grafana sends it: $job as the regex of every job (the variable's "All"),
 * $__rate_interval as the given range.
 */
export function grafanaQuery(expr: string, jobs: readonly string[], rateInterval: string): string {
  return expr
    .replaceAll('$job', `(${jobs.join('|')})`)
    .replaceAll('$__rate_interval', rateInterval);
}

/** GitHub's anchor of a Markdown heading. */
export function headingAnchor(heading: string): string {
  return heading
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\s_-]/gu, '')
    .replace(/\s/g, '-');
}
