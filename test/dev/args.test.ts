import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { parseDevArgs } from '#tools/dev/args';

describe('npm run dev arguments', () => {
  test('defaults: two workers, no simulation, a day per minute when simulating, state in .dev', () => {
    assert.deepEqual(parseDevArgs([]), {
      workers: 2,
      simulateBackups: false,
      clockFactor: 1440,
      dir: '.dev',
      dashboard: false,
      redis: 'standalone',
      help: false,
    });
  });

  test('--dashboard turns the queue dashboard on', () => {
    assert.equal(parseDevArgs(['--dashboard']).dashboard, true);
  });

  test('--redis picks the private Redis: standalone, cluster or sentinel', () => {
    assert.equal(parseDevArgs(['--redis', 'cluster']).redis, 'cluster');
    assert.equal(parseDevArgs(['--redis', 'sentinel']).redis, 'sentinel');
    assert.throws(
      () => parseDevArgs(['--redis', 'replication']),
      /--redis must be one of standalone, cluster, sentinel, got "replication"/,
    );
  });

  test('--workers, --simulate-backups, --clock-factor and --dir are read', () => {
    const o = parseDevArgs([
      '--workers',
      '4',
      '--simulate-backups',
      '--clock-factor',
      '60',
      '--dir',
      '/tmp/x',
    ]);
    assert.deepEqual([o.workers, o.simulateBackups, o.clockFactor, o.dir], [4, true, 60, '/tmp/x']);
  });

  test('a bad value is an error that names the flag and what it accepts', () => {
    assert.throws(
      () => parseDevArgs(['--workers', '0']),
      /--workers must be an integer from 1 to 16, got "0"/,
    );
    assert.throws(() => parseDevArgs(['--workers', 'two']), /--workers must be an integer/);
    assert.throws(
      () => parseDevArgs(['--clock-factor', '1.5']),
      /--clock-factor must be an integer/,
    );
    assert.throws(() => parseDevArgs(['--verbose']), /Unknown option '--verbose'/);
  });
});
