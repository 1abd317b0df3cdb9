import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import type { Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { chromium, type BrowserContext, type Page } from 'playwright-core';
import { eventually, freePort, type RedisServer, startRedisServer } from '#testing';
import { RECORDS_DESCRIPTION, serveQueueDashboard, shardDisplayName } from '../src/dashboard.js';
import { QueueConsumer, WorkQueue } from '../src/index.js';

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
/** Keys that fail while they are in this set. */
const flaky = new Set<string>();
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
    // More than ten shards, so that sorting names as text would put 10 and 11 before 2.
    shards: 12,
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
      name: 'worker-0',
      handler: (key) => {
        if (key === 'ops/mysql-daily' || flaky.has(key)) throw new Error(failure);
      },
    });
    await queue.addBulk(['ops/mysql-daily', 'ops/postgres-hourly', 'web/redis-weekly']);
    await queue.addAfter('web/cache-nightly', 600_000);
    await eventually('the runs', async () =>
      (await queue.depth()).every((d) => d.ready + d.running === 0),
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

  test('lists every shard in numeric order, each with the worker that serves it', async () => {
    await page.goto(`${base}/`);
    const names = Array.from({ length: 12 }, (_, shard) =>
      shardDisplayName(`backupjob-${shard}`, 12),
    );
    await page.getByText(names[11]!, { exact: true }).first().waitFor();
    const shown = await page
      .getByText(/^shard \d+ · backupjob-\d+$/)
      .allInnerTexts()
      .then((texts) => [...new Set(texts)]);
    assert.deepEqual(shown, names);
    assert.equal(await page.getByText(/no workers/i).count(), 0, 'no shard says "No workers"');
    const api = (await (await fetch(`${base}/api/queues`)).json()) as {
      queues: { name: string; hasWorkers: boolean; description: string }[];
    };
    assert.ok(api.queues.every((q) => q.hasWorkers));
    assert.ok(api.queues.every((q) => q.description === RECORDS_DESCRIPTION));
    const workers = (await queue.bullQueues[0]!.getWorkers()).map((w) => w.rawname);
    assert.ok(
      workers.some((name) => name?.endsWith(':w:worker-0')),
      workers.join(', '),
    );
    if (process.env.SCREENSHOT_OVERVIEW) {
      await page.screenshot({ path: process.env.SCREENSHOT_OVERVIEW, fullPage: false });
    }
  });

  test("shows a failing key with its run's error", async () => {
    const shard = queue.shardOf('ops/mysql-daily');
    await page.goto(`${base}/queue/backupjob-${shard}?status=failed`);
    await page.getByText('ops/mysql-daily').first().waitFor();
    await page.getByText(failure).first().waitFor();
    if (screenshotPath) await page.screenshot({ path: screenshotPath, fullPage: false });
  });

  test('one failed record per failing key, removed when the key recovers', async () => {
    const key = 'web/flaky-hourly';
    const shard = queue.shardOf(key);
    const failedOf = async () => {
      const jobs = await queue.bullQueues[shard]!.getFailed();
      return jobs.filter((job) => job.name === key);
    };
    flaky.add(key);
    for (let run = 1; run <= 3; run++) {
      await queue.add(key);
      await eventually(`failure ${run}`, async () => (await queue.numRequeues(key)) === run);
    }
    const failed = await failedOf();
    assert.equal(failed.length, 1, 'three failed runs, one record');
    await page.goto(`${base}/queue/backupjob-${shard}?status=failed`);
    await page.getByText(key).first().waitFor();
    assert.equal(await page.getByText(key, { exact: true }).count(), 1);

    flaky.delete(key);
    await queue.add(key);
    await eventually('the recovery', async () => (await queue.numRequeues(key)) === 0);
    await eventually('the record removed', async () => (await failedOf()).length === 0);
    await page.goto(`${base}/queue/backupjob-${shard}?status=failed`);
    await page.getByText(`backupjob-${shard}`).first().waitFor();
    assert.equal(await page.getByText(key, { exact: true }).count(), 0);
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
    await eventually('the failure', async () => (await queue.numRequeues('ops/mysql-daily')) === 1);
  });
});
