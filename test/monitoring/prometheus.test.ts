import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { stringify } from 'yaml';
import { cronJobName } from '#reconciler';
import {
  eventually,
  freePort,
  startOperatorSystem,
  startProcess,
  type ManagedProcess,
  type OperatorSystem,
} from '#testing';
import { renderDashboard, type PanelData, type PanelSeries } from '#tools/dashboard/render';
import { backupJobManifest, expectOk, getBackupJob, isConverged } from '../e2e/support.js';
import {
  JOBS,
  alertRules,
  alertSignal,
  dashboard,
  grafanaQuery,
  renderedRuleGroups,
  type DashboardPanel,
} from './support.js';

// Debian's real Prometheus scrapes a running operator (a watcher and two workers on the API
// emulator) under the job names the chart's ServiceMonitor gives them, with the chart's rules
// loaded: every query of the dashboard and every alert's signal returns series, and every rule
// evaluates without error. The dashboard's panels are rendered from what Prometheus returned;
// with DASHBOARD_SVG=<file> that picture is written there (docs/images/dashboard.svg).

const PROMETHEUS = process.env.PROMETHEUS ?? 'prometheus';
const SCRAPE = '1s';
const RATE_INTERVAL = '15s';

let sys: OperatorSystem;
let prometheus: ManagedProcess;
let url: string;
const dir = mkdtempSync(join(tmpdir(), 'prometheus-'));

interface Vector {
  metric: Record<string, string>;
  value?: [number, string];
  values?: [number, string][];
}

async function query(path: string, params: Record<string, string>): Promise<Vector[]> {
  const res = await fetch(`${url}/api/v1/${path}?${new URLSearchParams(params)}`);
  const body = (await res.json()) as { status: string; error?: string; data: { result: Vector[] } };
  if (body.status !== 'success') throw new Error(`${params.query}: ${body.error}`);
  return body.data.result;
}

async function apply(name: string, spec: Record<string, unknown> = {}): Promise<void> {
  const manifest = stringify(backupJobManifest('ops', name, spec));
  expectOk(await sys.kubectl(['apply', '-f', '-'], { input: manifest }), 'apply');
}

before(async () => {
  sys = await startOperatorSystem({
    watchers: 1,
    workers: 2,
    emulator: { namespaces: ['ops'], controllers: { jobs: true, cronJobs: { schedule: false } } },
  });
  const targets = (procs: readonly ManagedProcess[]) =>
    procs.map((p) => `127.0.0.1:${sys.portsOf(p).metrics}`);
  const scrape = (job: string, procs: readonly ManagedProcess[]) => ({
    job_name: job,
    // As the chart's ServiceMonitor: backupjob_* keep their own namespace label.
    honor_labels: true,
    static_configs: [{ targets: targets(procs) }],
  });
  writeFileSync(join(dir, 'rules.yaml'), stringify(renderedRuleGroups(), { lineWidth: 0 }));
  writeFileSync(
    join(dir, 'prometheus.yml'),
    stringify({
      global: { scrape_interval: SCRAPE, evaluation_interval: SCRAPE },
      rule_files: [join(dir, 'rules.yaml')],
      scrape_configs: [scrape(JOBS.watcher, sys.watchers), scrape(JOBS.worker, sys.workers)],
    }),
  );
  const port = await freePort();
  url = `http://127.0.0.1:${port}`;
  prometheus = startProcess({
    name: 'prometheus',
    command: PROMETHEUS,
    args: [
      `--config.file=${join(dir, 'prometheus.yml')}`,
      `--storage.tsdb.path=${join(dir, 'data')}`,
      `--web.listen-address=127.0.0.1:${port}`,
    ],
  });
  await prometheus.waitForLine(/Server is ready to receive web requests/, 60_000);
});

after(async () => {
  await prometheus?.stop('SIGTERM');
  await sys?.stop();
  rmSync(dir, { recursive: true, force: true });
});

describe('Prometheus scrapes the running operator', { timeout: 300_000 }, () => {
  test('every target is up', async () => {
    await eventually('all three targets up', async () => {
      const up = await query('query', { query: 'up' });
      return up.length === 3 && up.every((v) => v.value?.[1] === '1');
    });
  });

  test('BackupJobs with backups that succeed and fail, and some traffic', async () => {
    await apply('mysql-daily');
    await apply('pg-hourly', { schedule: '0 * * * *', target: 'postgres' });
    await apply('redis-weekly', { schedule: '@weekly', target: 'redis', timeZone: 'Europe/Paris' });
    await apply('paused', { suspend: true });
    for (const name of ['mysql-daily', 'pg-hourly', 'redis-weekly', 'paused']) {
      await eventually(`${name} converged`, () => isConverged(sys, 'ops', name));
    }
    const run = (name: string) =>
      sys.emulator.runCronJob('ops', cronJobName(name)).metadata.name as string;
    sys.emulator.completeJob('ops', run('mysql-daily'));
    sys.emulator.completeJob('ops', run('redis-weekly'));
    sys.emulator.failJob(
      'ops',
      run('pg-hourly'),
      'BackoffLimitExceeded',
      'Job has reached the specified backoff limit',
    );
    await eventually(
      'the backups in status',
      () =>
        getBackupJob(sys, 'ops', 'mysql-daily')?.status?.lastBackupTime &&
        getBackupJob(sys, 'ops', 'pg-hourly')?.status?.conditions?.some(
          (c) => c.type === 'BackupSucceeded' && c.status === 'False',
        ),
    );
    // Schedule edits spread over a while, so rates and quantiles have something to show.
    for (let i = 0; i < 20; i++) {
      await apply('mysql-daily', { schedule: `${i} 2 * * *` });
      await new Promise((r) => setTimeout(r, 1000));
    }
    await eventually('mysql-daily converged', () => isConverged(sys, 'ops', 'mysql-daily'));
  });

  const board = dashboard();
  const jobs = [JOBS.watcher, JOBS.worker];

  test('every query of the dashboard returns series', async () => {
    await eventually('the edits scraped', async () => {
      const rate = await query('query', {
        query: `sum(increase(controller_runtime_reconcile_total{controller="backupjob"}[1m]))`,
      });
      return Number(rate[0]?.value?.[1]) > 10;
    });
    for (const panel of board.panels) {
      for (const target of panel.targets ?? []) {
        const q = grafanaQuery(target.expr, jobs, RATE_INTERVAL);
        const result = await query('query', { query: q });
        assert.ok(result.length > 0, `${panel.title} / ${target.refId}: ${q} returned no series`);
      }
    }
  });

  test('every alert evaluates, and its signal returns series', async () => {
    for (const rule of alertRules(renderedRuleGroups())) {
      const signal = alertSignal(rule.expr);
      const result = await query('query', { query: signal });
      assert.ok(result.length > 0, `${rule.alert}: ${signal} returned no series`);
    }
    const rules = await eventually('every rule evaluated', async () => {
      const res = await fetch(`${url}/api/v1/rules`);
      const body = (await res.json()) as {
        data: { groups: { rules: { name: string; health: string; lastError?: string }[] }[] };
      };
      const all = body.data.groups.flatMap((g) => g.rules);
      return all.length === 10 && all.every((r) => r.health !== 'unknown') && all;
    });
    for (const rule of rules) assert.equal(rule.health, 'ok', `${rule.name}: ${rule.lastError}`);
  });

  test('the BackupJob alerts see what the BackupJobs say', async () => {
    const failed = await query('query', {
      query: alertRules(renderedRuleGroups()).find((r) => r.alert === 'BackupJobBackupFailed')!
        .expr,
    });
    assert.deepEqual(
      failed.map((v) => `${v.metric.namespace}/${v.metric.name}`),
      ['ops/pg-hourly'],
    );
  });

  test('the dashboard renders from the query results', async () => {
    const end = Math.floor(Date.now() / 1000);
    const start = end - 120;
    const data = new Map<DashboardPanel, PanelData>();
    for (const panel of board.panels) {
      if (panel.type === 'row') continue;
      if (panel.type === 'table') {
        data.set(panel, { table: await tableData(panel) });
        continue;
      }
      const series: PanelSeries[] = [];
      for (const target of panel.targets ?? []) {
        const q = grafanaQuery(target.expr, jobs, RATE_INTERVAL);
        const result = await query('query_range', {
          query: q,
          start: String(start),
          end: String(end),
          step: '2',
        });
        for (const v of result) {
          series.push({
            name: legend(target.legendFormat ?? '', v.metric),
            points: (v.values ?? []).map(([t, value]) => [t, Number(value)] as const),
          });
        }
      }
      assert.ok(series.length > 0, `${panel.title} has data`);
      data.set(panel, { series });
    }
    const svg = renderDashboard(
      board.title,
      board.panels,
      data,
      `Rendered by test/monitoring/prometheus.test.ts from Prometheus ${PROMETHEUS} query results ` +
        `over 2 minutes of a watcher and two workers on the API emulator (not a Grafana screenshot).`,
    );
    for (const panel of board.panels) assert.ok(svg.includes(`>${panel.title}<`), panel.title);
    const out = process.env.DASHBOARD_SVG;
    if (out) writeFileSync(out, svg);
  });
});

function legend(format: string, metric: Record<string, string>): string {
  return (
    format.replace(/\{\{\s*(\w+)\s*\}\}/g, (_, label: string) => metric[label] ?? '') || 'value'
  );
}

/** The table panel as Grafana's merge + organize transformations show it. */
async function tableData(panel: DashboardPanel): Promise<{ columns: string[]; rows: string[][] }> {
  const cells = new Map<string, Record<string, string>>();
  const [ready, since, result, next] = panel.targets ?? [];
  const columns: [string, typeof ready, (v: Vector) => string][] = [
    ['Ready', ready, (v) => v.value?.[1] ?? ''],
    ['Since last success', since, (v) => duration(Number(v.value?.[1]))],
    ['Last result', result, (v) => v.metric.result ?? ''],
    ['Next run in', next, (v) => duration(Number(v.value?.[1]))],
  ];
  for (const [column, target, cell] of columns) {
    if (!target) continue;
    for (const v of await query('query', {
      query: grafanaQuery(target.expr, [JOBS.watcher, JOBS.worker], RATE_INTERVAL),
    })) {
      const key = `${v.metric.namespace}/${v.metric.name}`;
      cells.set(key, { ...cells.get(key), [column]: cell(v) });
    }
  }
  const names = ['namespace', 'name', ...columns.map(([c]) => c)];
  const rows = [...cells.entries()]
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([key, row]) => [...key.split('/'), ...columns.map(([c]) => row[c] ?? '')]);
  return { columns: names, rows };
}

function duration(seconds: number): string {
  if (!Number.isFinite(seconds)) return '';
  if (seconds >= 86_400) return `${(seconds / 86_400).toFixed(1)} d`;
  if (seconds >= 3_600) return `${(seconds / 3_600).toFixed(1)} h`;
  if (seconds >= 60) return `${(seconds / 60).toFixed(1)} min`;
  return `${Math.round(seconds)} s`;
}
