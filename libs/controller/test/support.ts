import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { KubeConfig, type V1CronJob, type V1Job } from '@kubernetes/client-node';
import { parseAllDocuments } from 'yaml';
import { API_VERSION, KIND, backupJobCrd, type BackupJob } from '#api';
import { start, type Emulator, type KubeObject, type StartOptions } from '#apiserver-emulator';
import { Logger } from '#observability';
import { reconcilerConfig } from '#reconciler';
import { jobStatus } from '#testing';
import { createReconcileKey, type ReconcileKey } from '../src/index.js';

const SAMPLE_FILE = 'config/samples/ops_v1alpha1_backupjob.yaml';
export const NAMESPACE = 'ops';
export const config = reconcilerConfig({ defaultImage: 'registry.example.com/backup:1.0' });

/** Verbs that change state; reads and watches are not writes. */
const READS = ['get', 'list', 'watch'];

export interface Harness {
  readonly emu: Emulator;
  readonly kc: KubeConfig;
  readonly logLines: string[];
  readonly reconcileKey: ReconcileKey;
  /** Shifts the controller's clock, to pass a backoff without waiting for it. */
  advanceClock(ms: number): void;
  stop(): Promise<void>;
}

export interface HarnessOptions {
  /** Enforce RBAC and reconcile as this ServiceAccount (namespace/name) instead of admin. */
  readonly serviceAccount?: { readonly namespace: string; readonly name: string };
  /** The emulator's clock and simulated controllers (CronJob and Job simulation are off by default). */
  readonly emulator?: Pick<StartOptions, 'clock' | 'controllers'>;
}

export async function startHarness(options: HarnessOptions = {}): Promise<Harness> {
  const sa = options.serviceAccount;
  const namespaces = sa ? [NAMESPACE, sa.namespace] : [NAMESPACE];
  const emu = await start({ port: 0, namespaces, rbac: sa !== undefined, ...options.emulator });
  const kc = new KubeConfig();
  try {
    emu.objects.create(backupJobCrd() as unknown as KubeObject);
    if (sa) {
      emu.objects.create({ apiVersion: 'v1', kind: 'ServiceAccount', metadata: { ...sa } });
    }
    kc.loadFromString(sa ? emu.kubeconfigForServiceAccount(sa.namespace, sa.name) : emu.kubeconfig);
  } catch (err) {
    await emu.stop();
    throw err;
  }
  const logLines: string[] = [];
  let offsetMs = 0;
  const reconcileKey = createReconcileKey({
    kubeConfig: kc,
    config,
    // The emulator's clock, so that a test moving it moves the controller's time too.
    clock: () => new Date(emu.core.clock.now() + offsetMs),
    logger: new Logger({ level: 'debug', sink: (line) => logLines.push(line) }),
    reportingInstance: 'test-worker',
  });
  return {
    emu,
    kc,
    logLines,
    reconcileKey,
    advanceClock: (ms) => {
      offsetMs += ms;
    },
    stop: () => emu.stop(),
  };
}

/** The writes (non-read requests) the emulator answered while `fn` ran. */
export async function writesDuring(emu: Emulator, fn: () => Promise<unknown>): Promise<string[]> {
  const mark = emu.core.log.mark();
  await fn();
  return emu.core.log
    .entries({ since: mark })
    .filter((r) => !READS.includes(r.verb))
    .map((r) => `${r.verb} ${r.resource}${r.subresource ? `/${r.subresource}` : ''}`);
}

/** Reconciles until a run writes nothing; fails if that takes more than a few runs. */
export async function converge(h: Harness, key: string): Promise<unknown> {
  for (let i = 0; i < 6; i++) {
    let result: unknown;
    const writes = await writesDuring(h.emu, async () => {
      result = await h.reconcileKey(key);
    });
    if (writes.length === 0) return result;
  }
  assert.fail(`${key} did not converge`);
}

export function sample(name: string, spec: Partial<BackupJob['spec']> = {}): BackupJob {
  const base = parseAllDocuments(readFileSync(SAMPLE_FILE, 'utf8'))
    .map((d) => d.toJS() as BackupJob)
    .find((d) => d.kind === KIND)!;
  return {
    ...base,
    metadata: { ...base.metadata, name, namespace: NAMESPACE },
    spec: { ...base.spec, ...spec },
  };
}

export function createBackupJob(h: Harness, bj: BackupJob): BackupJob {
  return h.emu.objects.create(bj as unknown as KubeObject) as unknown as BackupJob;
}

export function getBackupJob(h: Harness, name: string): BackupJob | undefined {
  return h.emu.objects.get(API_VERSION, KIND, name, NAMESPACE) as unknown as BackupJob | undefined;
}

export function patchSpec(h: Harness, name: string, spec: Partial<BackupJob['spec']>): void {
  h.emu.objects.patch(API_VERSION, KIND, name, NAMESPACE, { spec });
}

export function getCronJob(h: Harness, name: string): V1CronJob | undefined {
  return h.emu.objects.get('batch/v1', 'CronJob', name, NAMESPACE) as unknown as
    V1CronJob | undefined;
}

/** Finishes an existing Job the given way. */
export function setJobOutcome(
  h: Harness,
  name: string,
  state: 'succeeded' | 'failed',
  at = new Date(),
): void {
  const job = h.emu.objects.get('batch/v1', 'Job', name, NAMESPACE);
  assert.ok(job, `Job ${name} exists`);
  h.emu.objects.update({ ...job, status: jobStatus(state, at) } as KubeObject, 'status');
}

/** A Job as the CronJob controller would start it from the template, then finished. */
export function finishJob(
  h: Harness,
  template: { metadata?: V1Job['metadata']; spec?: V1Job['spec'] },
  name: string,
  state: 'succeeded' | 'failed',
  at: Date,
): void {
  h.emu.objects.create({
    apiVersion: 'batch/v1',
    kind: 'Job',
    metadata: { ...template.metadata, name, namespace: NAMESPACE },
    spec: template.spec,
  } as unknown as KubeObject);
  setJobOutcome(h, name, state, at);
}

export function eventsFor(h: Harness, name: string): KubeObject[] {
  return h.emu.objects
    .list('events.k8s.io/v1', 'Event', NAMESPACE)
    .filter((e) => (e as unknown as { regarding?: { name?: string } }).regarding?.name === name);
}
