import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { summaryBlock, summaryLine } from '#tools/dev/format';
import type { Snapshot } from '#tools/dev/status';

const snapshot: Snapshot = {
  at: new Date('2026-05-29T02:10:05Z'),
  leaders: ['watcher-0'],
  shards: [
    { shard: 0, ready: 3, delayed: 1, running: 0 },
    { shard: 1, ready: 0, delayed: 0, running: 2 },
  ],
  reconcilesPerSecond: 12.345,
  reconcilesTotal: 400,
  readyProcesses: 2,
  processes: 3,
  exited: ['worker-1 (exit 1)'],
  backupJobs: [{ key: 'ops/mysql-daily', ready: true, lastBackupTime: '2026-05-29T02:10:00Z' }],
};

describe('the live summary', () => {
  test('one line for pipes: leader, depth per shard, reconciles/s, BackupJobs and exited processes', () => {
    assert.equal(
      summaryLine(snapshot),
      '[02:10:05] leader=watcher-0 depth=[3,0] delayed=1 running=2 reconciles/s=12.3 ' +
        'reconciles=400 ready=2/3 backupjobs: ops/mysql-daily Ready=true last backup ' +
        '2026-05-29T02:10:00Z exited: worker-1 (exit 1)',
    );
  });

  test('a block for terminals, saying when there is no leader and no rate yet', () => {
    const block = summaryBlock({
      ...snapshot,
      leaders: [],
      reconcilesPerSecond: undefined,
      exited: [],
      backupJobs: [],
    });
    assert.match(block[1]!, /leader\s+none$/);
    assert.match(block[2]!, /shard 0: 3\s+shard 1: 0\s+\(delayed 1, running 2\)$/);
    assert.match(block[3]!, /reconciles\s+-\/s \(400 total\)\s+processes ready 2\/3$/);
    assert.match(block[4]!, /BackupJobs\s+none$/);
    assert.equal(block.length, 5, 'no exited line while every process runs');
  });
});
