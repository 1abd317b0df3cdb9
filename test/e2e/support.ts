import type { KubeObject, RequestRecord } from '#apiserver-emulator';
import { API_VERSION, KIND } from '#api';
import { cleanupJobName, cronJobName } from '#reconciler';
import {
  condition,
  eventually,
  OPERATOR_NAMESPACE,
  type OperatorSystem,
  type KubectlResult,
  type ManagedProcess,
} from '#testing';

// The systems keep the apps' default Lease timings: with second-long ones a leader on a loaded
// machine misses its renew deadline and exits as designed (a pod would be restarted; here the test
// would simply lose its only watcher).

export const USERS = {
  watcher: `system:serviceaccount:${OPERATOR_NAMESPACE}:backupjob-operator-watcher`,
  worker: `system:serviceaccount:${OPERATOR_NAMESPACE}:backupjob-operator-worker`,
} as const;
const OPERATOR_USERS = new Set<string>(Object.values(USERS));
const READ_VERBS = new Set(['get', 'list', 'watch']);

export interface Condition {
  type: string;
  status: string;
  reason?: string;
  message?: string;
  lastTransitionTime?: string;
  observedGeneration?: number;
}

export interface BackupJobStatus {
  ready?: boolean;
  message?: string;
  observedGeneration?: number;
  lastBackupTime?: string;
  conditions?: Condition[];
}

export type BackupJobObject = KubeObject & {
  spec: Record<string, unknown>;
  status?: BackupJobStatus;
};

export function backupJobManifest(
  namespace: string,
  name: string,
  spec: Record<string, unknown> = {},
): BackupJobObject {
  return {
    apiVersion: API_VERSION,
    kind: KIND,
    metadata: { name, namespace },
    spec: { target: 'mysql', schedule: '10 2 * * *', retentionDays: 7, ...spec },
  };
}

export function getBackupJob(
  sys: OperatorSystem,
  namespace: string,
  name: string,
): BackupJobObject | undefined {
  return sys.emulator.objects.get<BackupJobObject>(API_VERSION, KIND, name, namespace);
}

export function getCronJob(
  sys: OperatorSystem,
  namespace: string,
  backupJobName: string,
): KubeObject | undefined {
  return sys.emulator.objects.get('batch/v1', 'CronJob', cronJobName(backupJobName), namespace);
}

/**
 * Waits for the finalizer's cleanup Job of this attempt and returns its name; a retry comes only
 * after the reconciler's backoff (10 s for the second attempt), hence the longer deadline.
 */
export async function cleanupJob(
  sys: OperatorSystem,
  namespace: string,
  backupJobName: string,
  attempt: number,
): Promise<string> {
  const name = cleanupJobName(backupJobName, attempt);
  await eventually(
    `cleanup Job ${name}`,
    () => sys.emulator.objects.get('batch/v1', 'Job', name, namespace),
    60_000,
  );
  return name;
}

/**
 * What "converged" means to a user: the CronJob carries the spec's schedule, status speaks of the
 * current generation and says Ready.
 */
export function isConverged(sys: OperatorSystem, namespace: string, name: string): boolean {
  const bj = getBackupJob(sys, namespace, name);
  const cj = getCronJob(sys, namespace, name);
  if (!bj || !cj) return false;
  const ready = condition(bj, 'Ready');
  return (
    (cj.spec as { schedule?: string }).schedule === bj.spec.schedule &&
    bj.status?.observedGeneration === bj.metadata.generation &&
    ready?.status === 'True' &&
    ready.observedGeneration === bj.metadata.generation
  );
}

/** Writes (anything but get/list/watch) the operator's ServiceAccounts made since a log mark. */
export function operatorWrites(sys: OperatorSystem, since: number): RequestRecord[] {
  return sys.emulator.log
    .entries({ since })
    .filter((r) => OPERATOR_USERS.has(r.user) && !READ_VERBS.has(r.verb));
}

export async function scrapeMetrics(sys: OperatorSystem, proc: ManagedProcess): Promise<string> {
  const res = await fetch(`http://127.0.0.1:${sys.portsOf(proc).metrics}/metrics`);
  return res.text();
}

/** Sum of the samples of `name` whose labels include every given label. */
export function metricValue(text: string, name: string, labels: Record<string, string> = {}) {
  let sum = 0;
  for (const line of text.split('\n')) {
    const m = /^([a-zA-Z_:][\w:]*)(\{[^}]*\})?\s+(\S+)/.exec(line);
    if (!m || m[1] !== name) continue;
    const set = m[2] ?? '';
    if (Object.entries(labels).every(([k, v]) => set.includes(`${k}="${v}"`))) sum += Number(m[3]);
  }
  return sum;
}

/** The metric lines of `name` whose labels include every given label (for docs and messages). */
export function metricLines(text: string, name: string, labels: Record<string, string> = {}) {
  return text
    .split('\n')
    .filter(
      (l) =>
        l.startsWith(`${name}{`) &&
        Object.entries(labels).every(([k, v]) => l.includes(`${k}="${v}"`)),
    );
}

export function expectOk(result: KubectlResult, what: string): string {
  if (result.code !== 0) {
    throw new Error(`${what} failed (${result.code}): ${result.stderr || result.stdout}`);
  }
  return result.stdout;
}

/** Prints captured command output when E2E_CAPTURE is set (docs/troubleshooting.md quotes it). */
export function capture(title: string, text: string): void {
  if (process.env.E2E_CAPTURE) process.stderr.write(`\n===== ${title}\n${text}\n`);
}
