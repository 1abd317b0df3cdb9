import { relative } from 'node:path';
import type { Sandbox } from './sandbox.js';
import type { Snapshot } from './status.js';

/** The stable prefix of the line printed once everything is up; scripts and tests wait for it. */
const READY_PREFIX = 'sandbox ready:';

/** The commands the banner suggests, in the order a newcomer runs them. */
function tourCommands(sandbox: Sandbox): string[] {
  const { namespace, name } = sandbox.sample;
  return [
    'kubectl get bj -A',
    `kubectl get cronjob -n ${namespace}`,
    `kubectl describe bj ${name} -n ${namespace}`,
  ];
}

/** What the user reads once the sandbox is up: where everything is and what to try. */
export function banner(sandbox: Sandbox, simulate: string | undefined): string[] {
  const { namespace, name } = sandbox.sample;
  const processes = [...sandbox.watchers, ...sandbox.workers];
  const width = Math.max(...processes.map((p) => p.name.length));
  return [
    'backupjob-operator sandbox: no cluster, everything on this machine',
    `  API server   ${sandbox.system.emulator.url} (the project's Kubernetes API emulator)`,
    `  Redis        ${sandbox.redis.address} (${sandbox.redis.origin})`,
    `  CRD          backupjobs.ops.example.com; sample ${namespace}/${name} applied`,
    ...(simulate ? [`  backups      ${simulate}`] : []),
    '',
    'Processes (metrics, health):',
    ...processes.map(
      (p) =>
        `  ${p.name.padEnd(width)}  pid ${p.pid}  ${p.metricsUrl}  ${p.healthUrl}/healthz  ${p.healthUrl}/readyz`,
    ),
    `  logs: ${relative(process.cwd(), sandbox.logDir) || '.'}/<name>.log`,
    ...(sandbox.dashboardUrl
      ? [`  queue dashboard (read-only Bull Board): ${sandbox.dashboardUrl}`]
      : []),
    '',
    'Point kubectl at it (in another terminal):',
    `  export KUBECONFIG=${sandbox.kubeconfigPath}`,
    '',
    'Then try:',
    ...tourCommands(sandbox).map((c) => `  ${c}`),
    '',
    'Change the schedule and watch the CronJob follow, then delete the BackupJob:',
    `  kubectl patch bj ${name} -n ${namespace} --type merge -p '{"spec":{"schedule":"*/5 * * * *"}}'`,
    `  kubectl get cronjob -n ${namespace}`,
    `  kubectl delete bj ${name} -n ${namespace}`,
    '',
    'Ctrl-C (or SIGINT or SIGTERM to this process) stops everything.',
  ];
}

export function readyLine(sandbox: Sandbox): string {
  const { namespace, name } = sandbox.sample;
  return (
    `${READY_PREFIX} ${sandbox.watchers.length} watcher, ${sandbox.workers.length} workers, ` +
    `BackupJob ${namespace}/${name} Ready=True; KUBECONFIG=${sandbox.kubeconfigPath}`
  );
}

function clock(d: Date): string {
  return d.toISOString().slice(11, 19);
}

function rate(s: Snapshot): string {
  return s.reconcilesPerSecond === undefined ? '-' : s.reconcilesPerSecond.toFixed(1);
}

function backups(s: Snapshot): string {
  if (s.backupJobs.length === 0) return 'none';
  return s.backupJobs
    .map((b) => `${b.key} Ready=${b.ready} last backup ${b.lastBackupTime ?? '-'}`)
    .join('; ');
}

function sum(values: number[]): number {
  return values.reduce((a, b) => a + b, 0);
}

/** The live summary as a few aligned lines, for a terminal refreshed in place. */
export function summaryBlock(s: Snapshot): string[] {
  return [
    `── live ${clock(s.at)} UTC ──`,
    `  leader       ${s.leaders.join(', ') || 'none'}`,
    `  queue depth  ${s.shards.map((d) => `shard ${d.shard}: ${d.ready}`).join('  ')}` +
      `  (delayed ${sum(s.shards.map((d) => d.delayed))}, running ${sum(s.shards.map((d) => d.running))})`,
    `  reconciles   ${rate(s)}/s (${s.reconcilesTotal} total)   processes ready ${s.readyProcesses}/${s.processes}`,
    `  BackupJobs   ${backups(s)}`,
    ...(s.exited.length ? [`  exited       ${s.exited.join(', ')}: see the logs`] : []),
  ];
}

/** The live summary as one line, for logs and pipes. */
export function summaryLine(s: Snapshot): string {
  return (
    `[${clock(s.at)}] leader=${s.leaders.join(',') || 'none'} ` +
    `depth=[${s.shards.map((d) => d.ready).join(',')}] ` +
    `delayed=${sum(s.shards.map((d) => d.delayed))} running=${sum(s.shards.map((d) => d.running))} ` +
    `reconciles/s=${rate(s)} reconciles=${s.reconcilesTotal} ready=${s.readyProcesses}/${s.processes} ` +
    `backupjobs: ${backups(s)}` +
    (s.exited.length ? ` exited: ${s.exited.join(', ')}` : '')
  );
}
