import { spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { parse, parseAllDocuments } from 'yaml';

/** The chart, relative to the repository root the tests run from. */
export const CHART = 'helm/backupjob-operator';
export const RELEASE = 'backup-operator';
export const NAMESPACE = 'backup-operator-system';

/** The real Helm 3 binary scripts/install-helm.sh puts in the tree (HELM overrides it). */
const HELM = resolve(process.env.HELM ?? '.tools/helm/bin/helm');

// Helm writes caches and reads repositories under HOME; a private one keeps the runs hermetic,
// and KUBECONFIG=/dev/null makes sure nothing reaches a cluster.
const helmHome = mkdtempSync(join(tmpdir(), 'helm-home-'));
process.on('exit', () => rmSync(helmHome, { recursive: true, force: true }));

export interface HelmRun {
  status: number;
  stdout: string;
  stderr: string;
}

export function helm(args: readonly string[]): HelmRun {
  if (!existsSync(HELM)) {
    throw new Error(`helm not found at ${HELM}: run scripts/install-helm.sh first`);
  }
  const run = spawnSync(HELM, args, {
    encoding: 'utf8',
    env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: helmHome, KUBECONFIG: '/dev/null' },
    maxBuffer: 64 * 1024 * 1024,
  });
  if (run.error) throw run.error;
  return { status: run.status ?? -1, stdout: run.stdout, stderr: run.stderr };
}

/** The example values files shipped in the chart's ci/ folder. */
export const CI_VALUES = [
  'default-values.yaml',
  'namespaced-values.yaml',
  'ha-off-values.yaml',
  'monitoring-autoscaling-netpol-values.yaml',
  'external-redis-tls-values.yaml',
  'redis-cluster-values.yaml',
  'redis-sentinel-values.yaml',
  'keda-values.yaml',
].map((file) => `${CHART}/ci/${file}`);

export interface KubeObject {
  apiVersion: string;
  kind: string;
  metadata: {
    name: string;
    namespace?: string;
    labels?: Record<string, string>;
    annotations?: Record<string, string>;
  };
  [field: string]: unknown;
}

/** `helm template` arguments for the given values files and --set pairs. */
export function templateArgs(
  valuesFiles: readonly string[] = [],
  sets: readonly string[] = [],
  extra: readonly string[] = [],
): string[] {
  return [
    'template',
    RELEASE,
    CHART,
    '--namespace',
    NAMESPACE,
    // The CRD is part of what users install, so it is checked like every other object.
    '--include-crds',
    ...valuesFiles.flatMap((file) => ['--values', file]),
    ...sets.flatMap((set) => ['--set', set]),
    ...extra,
  ];
}

/** Renders the chart and parses every document; throws with Helm's message when rendering fails. */
export function renderChart(
  valuesFiles: readonly string[] = [],
  sets: readonly string[] = [],
  extra: readonly string[] = [],
): KubeObject[] {
  const run = helm(templateArgs(valuesFiles, sets, extra));
  if (run.status !== 0) throw new Error(`helm template failed: ${run.stderr}`);
  return parseAllDocuments(run.stdout).flatMap((doc) => {
    if (doc.errors.length > 0)
      throw new Error(`invalid YAML from helm template: ${doc.errors[0]?.message}`);
    const object = doc.toJS() as KubeObject | null;
    return object === null ? [] : [object];
  });
}

export function findObject(objects: readonly KubeObject[], kind: string, name: string): KubeObject {
  const found = objects.find((o) => o.kind === kind && o.metadata.name === name);
  if (!found) {
    const have = objects.map((o) => `${o.kind}/${o.metadata.name}`).join(', ');
    throw new Error(`no ${kind}/${name} rendered; have ${have}`);
  }
  return found;
}

/**
 * NOTES.txt as `helm install` would print it. Helm renders NOTES only against a cluster, so a
 * copy of the chart turns it into a named template that a one-line manifest includes.
 */
export function renderNotes(sets: readonly string[] = []): string {
  const copy = join(mkdtempSync(join(tmpdir(), 'chart-notes-')), 'chart');
  cpSync(CHART, copy, { recursive: true });
  const notes = readFileSync(join(copy, 'templates/NOTES.txt'), 'utf8');
  writeFileSync(
    join(copy, 'templates/_notes-under-test.tpl'),
    `{{- define "notes-under-test" -}}\n${notes}{{- end }}\n`,
  );
  writeFileSync(
    join(copy, 'templates/notes-under-test.yaml'),
    'notes: {{ include "notes-under-test" . | toJson }}\n',
  );
  const args = templateArgs([], sets).map((arg) => (arg === CHART ? copy : arg));
  const run = helm([...args, '--show-only', 'templates/notes-under-test.yaml']);
  rmSync(dirname(copy), { recursive: true, force: true });
  if (run.status !== 0) throw new Error(`rendering NOTES.txt failed: ${run.stderr}`);
  return (parse(run.stdout) as { notes: string }).notes;
}
