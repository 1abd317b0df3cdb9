import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { stringify } from 'yaml';
import type { FaultMatch, KubeObject, RequestFilter } from '#apiserver-emulator';
import { ANNOTATION_OWNER_NAME } from '#api';
import { cronJobName } from '#reconciler';
import {
  condition,
  eventually,
  jsonLines,
  type ManagedProcess,
  type OperatorSystem,
  startOperatorSystem,
} from '#testing';
import {
  USERS,
  backupJobManifest,
  capture,
  expectOk,
  getBackupJob,
  getCronJob,
  isConverged,
} from './support.js';

// Every write the operator makes, failing with each of 500, 403, 409 and 422 for as long as it
// takes to be reported, as a user sees it: `kubectl get` shows READY false, `kubectl describe`
// shows the reason, the message and one Warning Event; status.observedGeneration does not move;
// status is written once however often the key is retried; the next success clears it.

const NS = 'ops';
const CODES = [500, 403, 409, 422] as const;
type Code = (typeof CODES)[number];
const REASONS: Record<Code, string> = {
  500: 'APIServerError',
  403: 'Forbidden',
  409: 'Conflict',
  422: 'RequestInvalid',
};
const API_REASONS: Record<Code, string> = {
  500: 'InternalError',
  403: 'Forbidden',
  409: 'Conflict',
  422: 'Invalid',
};

let sys: OperatorSystem;
let worker: ManagedProcess;

before(async () => {
  sys = await startOperatorSystem({
    watchers: 1,
    workers: 1,
    // The backoff still doubles while a failure lasts; the cap only keeps a recovery (which waits
    // for the next retry) short enough for a test.
    env: { BACKOFF_MAX: '2s' },
    emulator: { namespaces: [NS], controllers: { jobs: true, cronJobs: { schedule: false } } },
  });
  worker = sys.workers[0]!;
});

after(async () => {
  await sys?.stop();
});

async function kubectl(...args: string[]): Promise<string> {
  return expectOk(await sys.kubectl(args), args.join(' '));
}

async function apply(manifest: KubeObject): Promise<void> {
  expectOk(await sys.kubectl(['apply', '-f', '-'], { input: stringify(manifest) }), 'apply');
}

function workerRequests(since: number, match: RequestFilter) {
  return sys.emulator.log.entries({ since, user: USERS.worker, ...match });
}

/** Brings a BackupJob to where its next run makes the write under test. */
interface Write {
  readonly name: string;
  /** The fault's target: the worker's requests of this verb and resource. */
  readonly match: FaultMatch;
  /** The step as Ready's message names it. */
  readonly says: (bj: string) => string;
  /**
   * Runs before the fault is on; returns what makes the write happen once it is, which resolves
   * the status.observedGeneration the failure must leave as it is.
   */
  readonly prepare: (bj: string) => Promise<() => Promise<number | undefined>>;
  /** Once the fault is gone: waits for the next success and tidies up. */
  readonly recover: (bj: string) => Promise<void>;
}

function observedGeneration(bj: string): number | undefined {
  return getBackupJob(sys, NS, bj)?.status?.observedGeneration;
}

async function created(bj: string): Promise<() => Promise<number | undefined>> {
  return async () => {
    await apply(backupJobManifest(NS, bj));
    return undefined;
  };
}

async function converged(bj: string): Promise<void> {
  await eventually(`${bj} to converge`, () => isConverged(sys, NS, bj));
}

/** Converged with deletionPolicy Delete; the write under test happens once it is deleted. */
async function deletable(bj: string): Promise<() => Promise<number | undefined>> {
  await apply(backupJobManifest(NS, bj, { deletionPolicy: 'Delete' }));
  await converged(bj);
  return async () => {
    const observed = observedGeneration(bj);
    await kubectl('delete', 'bj', bj, '-n', NS, '--wait=false');
    return observed;
  };
}

/** The finalizer's cleanup goes on once the fault is gone: its Job succeeds, the object goes. */
async function cleanedUp(bj: string): Promise<void> {
  const job = `${bj}-cleanup-1`;
  await eventually(`cleanup Job ${job}`, () =>
    sys.emulator.objects.get('batch/v1', 'Job', job, NS),
  );
  sys.emulator.completeJob(NS, job);
  await eventually(`${bj} to be gone`, () => !getBackupJob(sys, NS, bj), 30_000);
}

/** A backup Job still running, as the CronJob would have started it. */
function runningBackup(bj: string): string {
  const cronJob = getCronJob(sys, NS, bj)!;
  const template = (cronJob.spec as { jobTemplate: { metadata?: KubeObject['metadata'] } })
    .jobTemplate;
  const name = `${bj}-backup-1`;
  // No ownerReference: the garbage collector must not remove it with the CronJob before the
  // operator's own delete, which is the write under test.
  sys.emulator.objects.create({
    apiVersion: 'batch/v1',
    kind: 'Job',
    metadata: {
      name,
      namespace: NS,
      labels: template.metadata?.labels,
      annotations: { ...template.metadata?.annotations, [ANNOTATION_OWNER_NAME]: bj },
    },
    spec: (cronJob.spec as { jobTemplate: { spec: unknown } }).jobTemplate.spec,
  });
  return name;
}

const WRITES: Write[] = [
  {
    name: 'finalizer patch',
    match: { verb: 'patch', resource: 'backupjobs', subresource: '' },
    says: () => 'adding the finalizer',
    prepare: created,
    recover: converged,
  },
  {
    name: 'CronJob create',
    match: { verb: 'create', resource: 'cronjobs' },
    says: (bj) => `creating CronJob ${cronJobName(bj)}`,
    prepare: created,
    recover: converged,
  },
  {
    name: 'CronJob patch',
    match: { verb: 'patch', resource: 'cronjobs' },
    says: (bj) => `updating CronJob ${cronJobName(bj)}`,
    prepare: async (bj) => {
      await apply(backupJobManifest(NS, bj));
      await converged(bj);
      return async () => {
        const observed = observedGeneration(bj);
        await apply(backupJobManifest(NS, bj, { schedule: '45 4 * * *' }));
        return observed;
      };
    },
    recover: converged,
  },
  {
    name: 'CronJob delete',
    match: { verb: 'delete', resource: 'cronjobs' },
    says: (bj) => `deleting CronJob ${cronJobName(bj)}`,
    prepare: deletable,
    recover: cleanedUp,
  },
  {
    name: 'Job create',
    match: { verb: 'create', resource: 'jobs' },
    says: (bj) => `creating Job ${bj}-cleanup-1`,
    // The run that deletes the CronJob succeeds and records the deletion's generation; the cleanup
    // Job is created by a later run.
    prepare: async (bj) => {
      const remove = await deletable(bj);
      return async () => {
        await remove();
        return eventually('the CronJob deletion recorded in status', () => {
          const deleted = getBackupJob(sys, NS, bj);
          const generation = deleted?.metadata.generation;
          return deleted?.status?.observedGeneration === generation && generation;
        });
      };
    },
    recover: cleanedUp,
  },
  {
    name: 'Job delete',
    match: { verb: 'delete', resource: 'jobs' },
    says: (bj) => `deleting Job ${bj}-backup-1`,
    prepare: async (bj) => {
      const remove = await deletable(bj);
      runningBackup(bj);
      return remove;
    },
    recover: async (bj) => {
      await eventually(
        'the running backup to be stopped',
        () => !sys.emulator.objects.get('batch/v1', 'Job', `${bj}-backup-1`, NS),
      );
      await cleanedUp(bj);
    },
  },
];

/** What `kubectl describe` shows of the BackupJob's Events, one line per Event. */
function eventLines(described: string): string[] {
  const events = described.split(/^Events:\s*$/m)[1] ?? '';
  return events.split('\n').filter((l) => /^\s+(Normal|Warning)\s/.test(l));
}

function warnings(described: string, reason: string): string[] {
  return eventLines(described).filter((l) => new RegExp(`^\\s+Warning\\s+${reason}\\s`).test(l));
}

for (const write of WRITES) {
  describe(`${write.name} fails`, () => {
    for (const code of CODES) {
      test(`${code}: READY false, the reason and message in describe, one Warning Event; cleared on success`, async () => {
        const bj = `${write.name.toLowerCase().replace(/ /g, '-')}-${code}`;
        const trigger = await write.prepare(bj);
        const fault = sys.emulator.faults.addError({
          match: { ...write.match, namespace: NS, user: USERS.worker },
          code,
        });
        const reason = REASONS[code];
        const message = `${write.says(bj)} failed with ${code} ${API_REASONS[code]}: injected fault (${code})`;
        try {
          const observed = await trigger();
          const ready = await eventually(`Ready=False ${reason}`, () => {
            const c = condition(getBackupJob(sys, NS, bj), 'Ready');
            return c?.reason === reason && c;
          });
          assert.equal(ready.status, 'False');
          assert.equal(ready.message, message);
          assert.equal(getBackupJob(sys, NS, bj)?.status?.observedGeneration, observed);
          // Two more failed retries at least, so "once per change" is held against retries.
          const reported = sys.emulator.log.mark();
          const failedSince = () => workerRequests(reported, { ...write.match, code }).length;
          await eventually('two more failed retries', () => failedSince() >= 2);
          const got = await kubectl('get', 'bj', bj, '-n', NS);
          const described = await kubectl('describe', 'bj', bj, '-n', NS);
          capture(`${write.name} ${code}: kubectl get`, got);
          capture(`${write.name} ${code}: kubectl describe`, described);
          assert.match(got, new RegExp(`^${bj}\\s+mysql\\s+(\\S+ ){5}\\s*false\\s`, 'm'));
          assert.match(described, new RegExp(`Reason:\\s+${reason}\\n`));
          assert.ok(described.includes(message), 'describe shows the message');
          assert.equal(warnings(described, reason).length, 1, eventLines(described).join('\n'));
          const statusWrites = workerRequests(reported, {
            verb: 'patch',
            resource: 'backupjobs',
            subresource: 'status',
            name: bj,
            code: 200,
          });
          assert.deepEqual(statusWrites, [], 'no status write per retry');
          assert.equal(getBackupJob(sys, NS, bj)?.status?.observedGeneration, observed);
        } finally {
          sys.emulator.faults.remove(fault);
        }
        await write.recover(bj);
        if (getBackupJob(sys, NS, bj)) {
          assert.notEqual(condition(getBackupJob(sys, NS, bj), 'Ready')?.reason, reason);
        }
      });
    }
  });
}

describe('status patch fails', () => {
  for (const code of CODES) {
    test(`${code}: the Warning Event says so; status catches up once it can be written`, async () => {
      const bj = `status-patch-${code}`;
      const fault = sys.emulator.faults.addError({
        match: { verb: 'patch', resource: 'backupjobs', subresource: 'status', user: USERS.worker },
        code,
      });
      const reason = REASONS[code];
      const note = `writing status failed with ${code} ${API_REASONS[code]}: injected fault (${code})`;
      try {
        await apply(backupJobManifest(NS, bj));
        const described = await eventually(
          `a Warning ${reason} Event`,
          async () => {
            const out = await kubectl('describe', 'bj', bj, '-n', NS);
            return out.includes(note) && out;
          },
          30_000,
        );
        capture(`status patch ${code}: kubectl describe`, described);
        assert.equal(warnings(described, reason).length, 1, eventLines(described).join('\n'));
        assert.equal(getBackupJob(sys, NS, bj)?.status, undefined);
        assert.ok(getCronJob(sys, NS, bj), 'the CronJob was made before the status write');
      } finally {
        sys.emulator.faults.remove(fault);
      }
      await converged(bj);
    });
  }
});

describe('Event create fails', () => {
  for (const code of CODES) {
    test(`${code}: the reconcile is not failed by it; the log says the Event was not recorded`, async () => {
      const bj = `event-create-${code}`;
      const fault = sys.emulator.faults.addError({
        match: { verb: 'create', resource: 'events', user: USERS.worker, namespace: NS },
        code,
      });
      try {
        await apply(backupJobManifest(NS, bj));
        await converged(bj);
        const line = await eventually('the lost Event in the log', () =>
          jsonLines(worker).find(
            (l) => l.msg === 'event not recorded' && l.key === `${NS}/${bj}` && l.code === code,
          ),
        );
        assert.equal(line.reason, 'CronJobCreated');
      } finally {
        sys.emulator.faults.remove(fault);
      }
      assert.equal(condition(getBackupJob(sys, NS, bj), 'Ready')?.status, 'True');
    });
  }
});
