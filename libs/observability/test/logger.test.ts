import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { Logger, NestJsonLogger, type Level, type LoggerOptions } from '../src/index.js';

function capture(options: LoggerOptions = {}) {
  const lines: string[] = [];
  const logger = new Logger({
    clock: () => new Date('2026-05-29T02:10:00.000Z'),
    ...options,
    sink: (line) => lines.push(line),
  });
  const entries = () => lines.map((l) => JSON.parse(l) as Record<string, unknown>);
  return { logger, lines, entries };
}

describe('Logger', () => {
  test('one JSON object per line with time, level, msg and the fields', () => {
    const { logger, lines } = capture();
    logger.info('reconciled', { key: 'ops/mysql-daily', reconcileID: 'r-1', durationMs: 12 });
    assert.equal(lines.length, 1);
    assert.ok(!lines[0]!.includes('\n'));
    assert.deepEqual(JSON.parse(lines[0]!), {
      time: '2026-05-29T02:10:00.000Z',
      level: 'info',
      msg: 'reconciled',
      key: 'ops/mysql-daily',
      reconcileID: 'r-1',
      durationMs: 12,
    });
  });

  const order: Level[] = ['debug', 'info', 'warn', 'error'];
  for (const level of order) {
    test(`LOG_LEVEL=${level} drops the levels below it`, () => {
      const { logger, entries } = capture({ level });
      for (const l of order) logger[l](`at ${l}`);
      assert.deepEqual(
        entries().map((e) => e.level),
        order.slice(order.indexOf(level)),
      );
      assert.equal(logger.enabled('debug'), level === 'debug');
    });
  }

  test('child loggers carry their fields; call fields win; the parent is unchanged', () => {
    const { logger, entries } = capture({ fields: { app: 'worker' } });
    const reconcile = logger
      .child({ controller: 'backupjob' })
      .child({ key: 'ops/a', reconcileID: 'r-9' });
    reconcile.info('start');
    reconcile.warn('retry', { reconcileID: 'r-10', attempt: 2 });
    logger.info('plain');
    assert.deepEqual(
      entries().map(({ time: _t, ...rest }) => rest),
      [
        {
          level: 'info',
          msg: 'start',
          app: 'worker',
          controller: 'backupjob',
          key: 'ops/a',
          reconcileID: 'r-9',
        },
        {
          level: 'warn',
          msg: 'retry',
          app: 'worker',
          controller: 'backupjob',
          key: 'ops/a',
          reconcileID: 'r-10',
          attempt: 2,
        },
        { level: 'info', msg: 'plain', app: 'worker' },
      ],
    );
  });

  test('fields cannot overwrite time, level or msg; undefined fields are left out', () => {
    const { logger, entries } = capture();
    logger.error('real', { msg: 'fake', level: 'debug', time: 'never', gone: undefined });
    assert.deepEqual(entries()[0], {
      time: '2026-05-29T02:10:00.000Z',
      level: 'error',
      msg: 'real',
    });
  });

  test('errors keep name, message, code and stack; bigints and cycles do not break the line', () => {
    const { logger, entries } = capture();
    const err = Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' });
    const cyclic: Record<string, unknown> = { a: 1 };
    cyclic.self = cyclic;
    logger.error('failed', { err, big: 10n, cyclic });
    const entry = entries()[0]!;
    const logged = entry.err as Record<string, unknown>;
    assert.equal(logged.name, 'Error');
    assert.equal(logged.message, 'connect ECONNREFUSED');
    assert.equal(logged.code, 'ECONNREFUSED');
    assert.match(String(logged.stack), /logger\.test/);
    assert.equal(entry.big, '10');
    assert.deepEqual(entry.cyclic, { a: 1, self: '[Circular]' });
  });
});

describe('NestJsonLogger', () => {
  test("Nest's calls become JSON lines with its context as the logger field", () => {
    const { logger, entries } = capture({ level: 'debug', fields: { app: 'watcher' } });
    const nest = new NestJsonLogger(logger);
    nest.log('Nest application successfully started', 'NestApplication');
    nest.warn('slow', 'InstanceLoader');
    nest.verbose('detail', 'RouterExplorer');
    nest.error('boom', 'Error: boom\n    at main (main.js:1:1)', 'ExceptionHandler');
    nest.fatal(new Error('fatal one'));
    nest.log({ some: 'object' });
    const got = entries().map(({ time: _t, ...rest }) => rest);
    assert.deepEqual(
      got.slice(0, 3).map((e) => [e.level, e.msg, e.logger, e.app]),
      [
        ['info', 'Nest application successfully started', 'NestApplication', 'watcher'],
        ['warn', 'slow', 'InstanceLoader', 'watcher'],
        ['debug', 'detail', 'RouterExplorer', 'watcher'],
      ],
    );
    assert.deepEqual(got[3], {
      level: 'error',
      msg: 'boom',
      app: 'watcher',
      logger: 'ExceptionHandler',
      stack: 'Error: boom\n    at main (main.js:1:1)',
    });
    assert.equal(got[4]!.level, 'error');
    assert.equal(got[4]!.msg, 'fatal one');
    assert.equal((got[4]!.err as { message: string }).message, 'fatal one');
    assert.deepEqual(got[5], {
      level: 'info',
      msg: 'nest',
      app: 'watcher',
      details: { some: 'object' },
    });
  });

  test('a lone stack trace is read as the stack, not as a context', () => {
    const { logger, entries } = capture();
    new NestJsonLogger(logger).error('failed', 'Error: x\n    at y (z.js:1:1)');
    const entry = entries()[0]!;
    assert.equal(entry.stack, 'Error: x\n    at y (z.js:1:1)');
    assert.equal(entry.logger, undefined);
  });

  test('respects LOG_LEVEL', () => {
    const { logger, lines } = capture({ level: 'warn' });
    const nest = new NestJsonLogger(logger);
    nest.log('hidden', 'X');
    nest.debug('hidden', 'X');
    nest.warn('shown', 'X');
    assert.equal(lines.length, 1);
  });
});
