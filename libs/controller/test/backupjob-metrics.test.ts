import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { API_VERSION, KIND, type BackupJob } from '#api';
import { reconcilerConfig } from '#reconciler';
import { backupJobMetrics, type BackupJobMetricsOptions } from '../src/index.js';

const config = reconcilerConfig({ defaultImage: 'registry.example.com/backup:1.0' });
const T0 = new Date('2026-05-29T00:00:00Z');

function backupJob(name: string, schedule: string, status?: BackupJob['status']): BackupJob {
  return {
    apiVersion: API_VERSION,
    kind: KIND,
    metadata: { name, namespace: 'ops', uid: `uid-${name}`, generation: 1 },
    spec: { target: 'mysql', schedule, retentionDays: 7, suspend: false, deletionPolicy: 'Retain' },
    ...(status ? { status } : {}),
  };
}

const ready = (at: Date): BackupJob['status'] => ({
  lastBackupTime: at.toISOString(),
  conditions: [
    {
      type: 'Ready',
      status: 'True',
      reason: 'R',
      message: 'm',
      lastTransitionTime: T0.toISOString(),
    },
    {
      type: 'BackupSucceeded',
      status: 'True',
      reason: 'R',
      message: 'm',
      lastTransitionTime: T0.toISOString(),
    },
  ],
});

/** The metrics as a scraper reads them: the chunks, in order, as one text. */
function scraper(options: BackupJobMetricsOptions): () => Promise<string> {
  const source = backupJobMetrics(options);
  return async () => {
    const out = await source();
    return typeof out === 'string' ? out : [...out].join('');
  };
}

/** What a scrape with nothing computed before says: the reference for a scrape that reuses state. */
const fromScratch = (objects: readonly BackupJob[], now: Date) =>
  scraper({ backupJobs: () => objects, config, clock: () => now })();

const nextRunOf = (text: string, name: string) =>
  text
    .split('\n')
    .find((l) =>
      l.startsWith(
        `backupjob_next_scheduled_run_timestamp_seconds{namespace="ops",name="${name}"}`,
      ),
    )
    ?.split(' ')[1];

describe('backupJobMetrics', () => {
  test('the series of every cached BackupJob, family by family, each family once with its header', async () => {
    const objects = [
      backupJob('a', '10 2 * * *', ready(new Date('2026-05-28T02:10:30Z'))),
      backupJob('b', '@hourly'),
      backupJob('c', 'not a schedule'),
    ];
    const text = await fromScratch(objects, T0);
    const families = text
      .split('\n')
      .filter((l) => l.startsWith('# TYPE '))
      .map((l) => l.split(' ')[2]);
    assert.deepEqual(families, [
      'backupjob_ready',
      'backupjob_last_successful_backup_timestamp_seconds',
      'backupjob_last_backup_result',
      'backupjob_backup_overdue',
      'backupjob_next_scheduled_run_timestamp_seconds',
    ]);
    const series = (name: string) => text.split('\n').filter((l) => l.startsWith(`${name}{`));
    assert.deepEqual(series('backupjob_ready'), [
      'backupjob_ready{namespace="ops",name="a"} 1',
      'backupjob_ready{namespace="ops",name="b"} 0',
      'backupjob_ready{namespace="ops",name="c"} 0',
    ]);
    assert.deepEqual(series('backupjob_last_successful_backup_timestamp_seconds'), [
      `backupjob_last_successful_backup_timestamp_seconds{namespace="ops",name="a"} ${Date.parse('2026-05-28T02:10:30Z') / 1000}`,
    ]);
    assert.equal(series('backupjob_last_backup_result').length, 9);
    // The invalid schedule has no next run.
    assert.equal(nextRunOf(text, 'a'), String(Date.parse('2026-05-29T02:10:00Z') / 1000));
    assert.equal(nextRunOf(text, 'c'), undefined);
    assert.ok(text.endsWith('\n'));
  });

  test('the next run moves on once it has passed, while the other values hold', async () => {
    const objects = [backupJob('hourly', '@hourly'), backupJob('daily', '10 2 * * *')];
    let now = T0;
    const scrape = scraper({ backupJobs: () => objects, config, clock: () => now });
    const first = await scrape();
    assert.equal(nextRunOf(first, 'hourly'), String(Date.parse('2026-05-29T01:00:00Z') / 1000));
    now = new Date('2026-05-29T01:00:00Z');
    const second = await scrape();
    assert.equal(nextRunOf(second, 'hourly'), String(Date.parse('2026-05-29T02:00:00Z') / 1000));
    assert.equal(nextRunOf(second, 'daily'), nextRunOf(first, 'daily'));
    assert.equal(second, await fromScratch(objects, now));
  });

  test('a changed BackupJob (a new object in the cache) is rendered anew; a deleted one is gone', async () => {
    let objects = [backupJob('a', '@daily'), backupJob('b', '@daily')];
    const scrape = scraper({ backupJobs: () => objects, config, clock: () => T0 });
    assert.match(await scrape(), /^backupjob_ready\{namespace="ops",name="a"\} 0$/m);
    objects = [backupJob('a', '@daily', ready(T0))];
    const text = await scrape();
    assert.match(text, /^backupjob_ready\{namespace="ops",name="a"\} 1$/m);
    assert.doesNotMatch(text, /name="b"/);
    assert.equal(text, await fromScratch(objects, T0));
  });

  test('no cache (a standby) exports nothing; an empty cache exports no family', async () => {
    assert.equal(await scraper({ backupJobs: () => undefined, config })(), '');
    assert.equal(await scraper({ backupJobs: () => [], config })(), '');
  });
});
