import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { copyFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { parse, stringify } from 'yaml';
import { findObject, renderChart } from '../deploy/support/helm.js';
import {
  alertRules,
  alertSignal,
  dashboard,
  headingAnchor,
  renderedRuleGroups,
  type AlertRule,
} from './support.js';

// The chart's alerts checked and unit-tested by Debian's promtool, the rules linked to their
// runbooks, and the dashboard ConfigMap as the Grafana sidecar expects it.

const PROMTOOL = process.env.PROMTOOL ?? 'promtool';
const UNIT_TESTS = 'test/monitoring/alerts.promtool.yaml';
const RUNBOOKS = 'docs/troubleshooting.md';

const dir = mkdtempSync(join(tmpdir(), 'promtool-'));
after(() => rmSync(dir, { recursive: true, force: true }));

function promtool(args: string[]) {
  const run = spawnSync(PROMTOOL, args, { cwd: dir, encoding: 'utf8' });
  if (run.error)
    throw new Error(`${PROMTOOL} could not run (apt-get install prometheus): ${run.error.message}`);
  return { status: run.status, output: `${run.stdout}${run.stderr}` };
}

describe('the PrometheusRule', () => {
  const groups = renderedRuleGroups();
  const rules = alertRules(groups);
  writeFileSync(join(dir, 'rules.yaml'), stringify(groups, { lineWidth: 0 }));
  copyFileSync(UNIT_TESTS, join(dir, 'alerts.promtool.yaml'));

  test('ships the alerts the runbooks describe', () => {
    assert.deepEqual(
      rules.map((r) => r.alert),
      [
        'BackupJobNotReady',
        'BackupJobBackupOverdue',
        'BackupJobBackupFailed',
        'BackupJobReconcileErrors',
        'BackupJobQueueBacklog',
        'BackupJobQueueSlow',
        'BackupJobOperatorNoLeader',
        'BackupJobOperatorWatcherAbsent',
        'BackupJobOperatorWatcherNotReady',
        'BackupJobOperatorRedisDown',
      ],
    );
  });

  test('promtool check rules accepts them', () => {
    const { status, output } = promtool(['check', 'rules', 'rules.yaml']);
    assert.equal(status, 0, output);
    assert.match(output, new RegExp(`SUCCESS: ${rules.length} rules found`));
  });

  test('promtool test rules: every unit test passes', () => {
    const { status, output } = promtool(['test', 'rules', 'alerts.promtool.yaml']);
    assert.equal(status, 0, output);
    assert.match(output, /SUCCESS/);
  });

  test('every alert has a unit test where it fires and one where it stays quiet', () => {
    type Case = { alertname: string; exp_alerts: unknown[] };
    const cases = (
      parse(readFileSync(UNIT_TESTS, 'utf8')) as { tests: { alert_rule_test: Case[] }[] }
    ).tests.flatMap((t) => t.alert_rule_test);
    for (const { alert } of rules) {
      const own = cases.filter((c) => c.alertname === alert);
      assert.ok(
        own.some((c) => c.exp_alerts.length > 0),
        `${alert} fires in a test`,
      );
      assert.ok(
        own.some((c) => c.exp_alerts.length === 0),
        `${alert} stays quiet in a test`,
      );
    }
  });

  test('every alert links a runbook section of docs/troubleshooting.md that exists', () => {
    const anchors = new Set(
      readFileSync(RUNBOOKS, 'utf8')
        .split('\n')
        .filter((l) => /^#{2,4} /.test(l))
        .map((l) => headingAnchor(l.replace(/^#+ /, ''))),
    );
    for (const rule of rules) {
      const url = new URL(rule.annotations.runbook_url ?? '');
      assert.match(url.pathname, /\/docs\/troubleshooting\.md$/, rule.alert);
      assert.ok(anchors.has(url.hash.slice(1)), `${rule.alert}: no heading for ${url.hash}`);
      assert.equal(url.hash.slice(1), rule.alert.toLowerCase());
    }
  });

  test('each alert is "<signal> <comparison>" and selects only this release', () => {
    for (const rule of rules as AlertRule[]) {
      assert.doesNotThrow(() => alertSignal(rule.expr), rule.alert);
      for (const selector of rule.expr.match(/\{[^}]*\}/g) ?? []) {
        assert.match(selector, /job=~?"backup-operator-/, `${rule.alert}: ${selector}`);
      }
    }
  });

  test('thresholds and the runbook URL follow values', () => {
    const custom = alertRules(
      renderedRuleGroups([
        'metrics.prometheusRule.notReadyFor=1h',
        'metrics.prometheusRule.queueDepth=5000',
        'metrics.prometheusRule.runbookUrl=https://wiki.example.com/backups',
      ]),
    );
    const byName = (name: string) => custom.find((r) => r.alert === name)!;
    assert.equal(byName('BackupJobNotReady').for, '1h');
    assert.match(byName('BackupJobQueueBacklog').expr, /> 5000$/);
    assert.equal(
      byName('BackupJobNotReady').annotations.runbook_url,
      'https://wiki.example.com/backups#backupjobnotready',
    );
  });
});

describe('the Grafana dashboard ConfigMap', () => {
  test('off by default; no PrometheusRule either', () => {
    const kinds = renderChart().map((o) => `${o.kind}/${o.metadata.name}`);
    assert.ok(!kinds.includes('ConfigMap/backup-operator-dashboard'));
    assert.ok(!kinds.some((k) => k.startsWith('PrometheusRule/')));
  });

  test('when enabled: the sidecar label, the dashboard JSON, the chosen namespace', () => {
    const objects = renderChart(
      [],
      [
        'metrics.dashboard.enabled=true',
        'metrics.dashboard.namespace=monitoring',
        'metrics.dashboard.annotations.grafana_folder=Operators',
      ],
    );
    const map = findObject(objects, 'ConfigMap', 'backup-operator-dashboard') as unknown as {
      metadata: {
        namespace: string;
        labels: Record<string, string>;
        annotations: Record<string, string>;
      };
      data: Record<string, string>;
    };
    assert.equal(map.metadata.labels.grafana_dashboard, '1');
    assert.equal(map.metadata.namespace, 'monitoring');
    assert.equal(map.metadata.annotations.grafana_folder, 'Operators');
    assert.deepEqual(JSON.parse(map.data['backupjob-operator.json']!), dashboard());
  });

  test('every panel query is limited to the operator by $job', () => {
    const board = dashboard();
    assert.deepEqual(
      board.templating.list.map((v) => v.name),
      ['datasource', 'job'],
    );
    const queries = board.panels.flatMap((p) => (p.targets ?? []).map((t) => t.expr));
    assert.ok(queries.length >= 15);
    for (const expr of queries) {
      for (const selector of expr.match(/\{[^}]*\}/g) ?? []) {
        assert.match(selector, /job=~"\$job"/, expr);
      }
    }
  });
});
