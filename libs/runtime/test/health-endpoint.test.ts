import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { INestApplicationContext } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { HealthCheckService, HealthIndicatorService, TerminusModule } from '@nestjs/terminus';
import { healthReport, type Terminus } from '../src/health-endpoint.js';

let app: INestApplicationContext;
let terminus: Terminus;
before(async () => {
  app = await NestFactory.createApplicationContext(TerminusModule.forRoot({ logger: false }), {
    logger: false,
  });
  terminus = { service: app.get(HealthCheckService), indicators: app.get(HealthIndicatorService) };
});
after(() => app.close());

test('a report through terminus: every check under details, the failing ones under error with their reason', async () => {
  let aborted = false;
  const report = await healthReport(terminus, [
    { name: 'redis', check: () => undefined },
    { name: 'watcher', check: () => ({ role: 'standby' }) },
    {
      name: 'apiserver',
      check: () => {
        throw new Error('connect ECONNREFUSED');
      },
    },
    {
      name: 'slow',
      timeoutMs: 20,
      check: (signal: AbortSignal) =>
        new Promise<void>((resolve) => {
          signal.addEventListener('abort', () => {
            aborted = true;
            resolve();
          });
        }),
    },
  ]);
  assert.equal(report.status, 'error');
  assert.deepEqual(Object.keys(report.details), ['redis', 'watcher', 'apiserver', 'slow']);
  assert.deepEqual(Object.keys(report.info), ['redis', 'watcher']);
  assert.equal(report.details.watcher!.role, 'standby');
  assert.equal(report.details.watcher!.status, 'up');
  assert.equal(report.error.apiserver!.message, 'connect ECONNREFUSED');
  assert.equal(report.error.slow!.message, 'timeout of 20ms exceeded');
  assert.equal(report.error.slow!.status, 'down');
  assert.ok(aborted, 'a check past its timeout is told to stop');
  assert.equal((await healthReport(terminus, [])).status, 'ok');
});
