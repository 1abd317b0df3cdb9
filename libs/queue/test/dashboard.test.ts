import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import type { Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { chromium, type BrowserContext, type Page } from 'playwright-core';
import { freePort, startRedisServer, type RedisServer } from '#testing';
import { serveQueueDashboard } from '../src/dashboard.js';
import { QueueConsumer, WorkQueue } from '../src/index.js';
import { waitFor } from './helpers.js';

/** Debian's chromium; the flags keep it from reaching out or needing a GPU or a sandbox. */
const chromiumPath = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const chromiumArgs = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];
const failure = 'backup target unreachable: mysql-0.ops refused the connection';
/** Where the README's screenshot comes from, when set (`SCREENSHOT=docs/queue-dashboard.png`). */
const screenshotPath = process.env.SCREENSHOT;

describe('queue dashboard (Bull Board) in headless Chromium', () => {
  let redis: RedisServer;
  let queue: WorkQueue;
  let consumer: QueueConsumer;
  let server: Server;
  let base: string;
  let profile: string;
  let browser: BrowserContext;
  let page: Page;
  const options = () => ({
    name: 'backupjob',
    connection: { url: redis.url },
    shards: 4,
    lockDurationMs: 2_000,
    // The failing key stays in its backoff, so its failed job is there to look at.
    backoff: { baseMs: 600_000, maxMs: 600_000 },
  });

  before(async () => {
    redis = await startRedisServer();
    queue = new WorkQueue(options());
    consumer = new QueueConsumer(options());
    consumer.start({
      concurrency: 2,
      handler: (key) => {
        if (key === 'ops/mysql-daily') throw new Error(failure);
      },
    });
    await queue.addBulk(['ops/mysql-daily', 'ops/postgres-hourly', 'web/redis-weekly']);
    await queue.addAfter('web/cache-nightly', 600_000);
    await waitFor(
      async () => (await queue.depth()).every((d) => d.ready + d.running === 0),
      'the runs',
    );
    const port = await freePort();
    server = await serveQueueDashboard(queue.bullQueues, { port, host: '127.0.0.1' });
    base = `http://127.0.0.1:${port}`;
    profile = mkdtempSync(join(tmpdir(), 'chromium-profile-'));
    browser = await chromium.launchPersistentContext(profile, {
      executablePath: chromiumPath,
      headless: true,
      args: chromiumArgs,
      viewport: { width: 1280, height: 800 },
    });
    page = await browser.newPage();
  });

  after(async () => {
    await browser?.close();
    if (profile) rmSync(profile, { recursive: true, force: true });
    await new Promise((resolve) => server?.close(resolve));
    await consumer?.shutdown({ drainTimeoutMs: 500 });
    await queue?.close();
    await redis?.stop();
  });

  test('lists every shard queue', async () => {
    await page.goto(`${base}/`);
    for (let shard = 0; shard < 4; shard++) {
      await page.getByText(`backupjob-${shard}`, { exact: true }).first().waitFor();
    }
  });

  test("shows a failing key with its run's error", async () => {
    const shard = queue.shardOf('ops/mysql-daily');
    await page.goto(`${base}/queue/backupjob-${shard}?status=failed`);
    await page.getByText('ops/mysql-daily').first().waitFor();
    await page.getByText(failure).first().waitFor();
    if (screenshotPath) await page.screenshot({ path: screenshotPath, fullPage: false });
  });

  test('offers no write action, and the server refuses one', async () => {
    const shard = queue.shardOf('ops/mysql-daily');
    for (const status of ['failed', 'delayed', 'completed', 'waiting']) {
      await page.goto(`${base}/queue/backupjob-${shard}?status=${status}`);
      await page.getByText(`backupjob-${shard}`).first().waitFor();
      const actions = page.getByRole('button', {
        name: /retry|clean|remove|delete|promote|pause|resume|empty|obliterate|add job|duplicate|update/i,
      });
      assert.equal(await actions.count(), 0, `no write action on the ${status} tab`);
    }
    for (const path of [
      `/api/queues/backupjob-${shard}/retry/failed`,
      `/api/queues/backupjob-${shard}/clean/failed`,
      `/api/queues/backupjob-${shard}/pause`,
    ]) {
      const response = await fetch(`${base}${path}`, { method: 'PUT' });
      assert.equal(response.status, 405, `${path} is refused`);
    }
    const failed = await fetch(`${base}/api/queues?activeQueue=backupjob-${shard}&status=failed`);
    assert.equal(failed.status, 200);
    assert.match(await failed.text(), /refused the connection/);
    await waitFor(async () => (await queue.numRequeues('ops/mysql-daily')) === 1, 'the failure');
  });
});
