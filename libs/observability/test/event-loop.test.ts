import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { setTimeout as sleep } from 'node:timers/promises';
import { promisify } from 'node:util';
import { Registry } from 'prom-client';
import { DelayWindow, EVENT_LOOP_SAMPLE_MS, registerEventLoopMetrics } from '../src/event-loop.js';
import { createRegistry } from '../src/metrics.js';

function sample(text: string, name: string): number | undefined {
  const line = text.split('\n').find((l) => l.startsWith(`${name} `));
  return line === undefined ? undefined : Number(line.slice(name.length + 1));
}

describe('event-loop delay', () => {
  test('a sample on time is no delay, a late one its lateness, an early one no delay', () => {
    const window = new DelayWindow(100, 0);
    // Due at 100, 200, 300, …: each sample counts from the one before it.
    for (const at of [100, 200, 299.5, 399.5, 749.5]) window.tick(at);
    const stats = window.take();
    assert.equal(stats.min, 0);
    // The histogram keeps three significant digits.
    assert.ok(stats.p50 < 1e-6, `p50 ${stats.p50}`);
    assert.ok(Math.abs(stats.max - 0.25) < 0.001, `max ${stats.max}`);
    assert.ok(Math.abs(stats.mean - 0.05) < 0.001, `mean ${stats.mean}`);
  });

  test('each window holds the samples since the last; the one before carries over', () => {
    const window = new DelayWindow(100, 0);
    window.tick(100);
    assert.equal(window.take().max, 0);
    // A stall that began right after the window closed still counts in the next one.
    window.tick(500);
    assert.ok(Math.abs(window.take().max - 0.3) < 0.001);
    assert.deepEqual(window.take(), {
      min: 0,
      max: 0,
      mean: 0,
      stddev: 0,
      p50: 0,
      p90: 0,
      p99: 0,
    });
  });

  test("a blocked loop shows in the next scrape's max; the scrape after it starts a new window", async () => {
    const registry = new Registry();
    registerEventLoopMetrics(registry);
    await registry.metrics();
    // Blocked for 3 intervals: whichever sample fell due during the block comes at least 2 late.
    const blockMs = 3 * EVENT_LOOP_SAMPLE_MS;
    const start = performance.now();
    while (performance.now() - start < blockMs);
    await sleep(EVENT_LOOP_SAMPLE_MS * 1.5);
    const text = await registry.metrics();
    assert.ok(
      sample(text, 'nodejs_eventloop_lag_max_seconds')! >= (2 * EVENT_LOOP_SAMPLE_MS) / 1e3,
    );
    assert.ok(sample(text, 'nodejs_eventloop_lag_seconds')! >= 0);
    const reset = await registry.metrics();
    assert.ok(
      sample(reset, 'nodejs_eventloop_lag_max_seconds')! <
        sample(text, 'nodejs_eventloop_lag_max_seconds')!,
      'each scrape reads the samples since the one before',
    );
  });

  test("the default registry has the event-loop gauges once, prom-client's replaced", async () => {
    const text = await createRegistry().metrics();
    for (const stat of ['', '_min', '_max', '_mean', '_stddev', '_p50', '_p90', '_p99']) {
      const name = `nodejs_eventloop_lag${stat}_seconds`;
      assert.equal(text.split('\n').filter((l) => l === `# TYPE ${name} gauge`).length, 1, name);
    }
    assert.match(text, /a timer due every 100 ms/);
  });

  test("an idle process holding the registry wakes 5 to 30 times a second, not prom-client's 100", async () => {
    // The main thread's voluntary context switches count the times its loop went to sleep and
    // woke again. prom-client's own monitor (10 ms) makes about 200 of them in these 2 s.
    const registry = new URL('../src/metrics.js', import.meta.url).href;
    const script = `
      import { readFileSync } from 'node:fs';
      import { createRegistry } from ${JSON.stringify(registry)};
      createRegistry();
      const switches = () => Number(/voluntary_ctxt_switches:\\s+(\\d+)/.exec(readFileSync('/proc/thread-self/status', 'utf8'))[1]);
      setTimeout(() => {
        const before = switches();
        setTimeout(() => console.log(switches() - before), 2000);
      }, 500);
    `;
    const { stdout } = await promisify(execFile)(process.execPath, [
      '--input-type=module',
      '-e',
      script,
    ]);
    const wakeups = Number(stdout.trim());
    // Every sample still wakes it: about 20 in 2 s.
    assert.ok(wakeups >= 10, `${wakeups} wake-ups in 2 s: the loop is still sampled`);
    assert.ok(wakeups < 60, `${wakeups} wake-ups in 2 s`);
  });
});
