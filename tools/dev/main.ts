import { parseDevArgs, USAGE, type DevOptions } from './args.js';
import { banner, readyLine, summaryBlock, summaryLine } from './format.js';
import { startSandbox, waitUntilReady, type Sandbox } from './sandbox.js';
import { StatusSampler } from './status.js';

/** A terminal gets a block refreshed in place; a pipe gets a plain line now and then. */
const TTY_REFRESH_MS = 2_000;
const LINE_INTERVAL_MS = 5_000;

function options(): DevOptions {
  try {
    return parseDevArgs(process.argv.slice(2));
  } catch (e) {
    console.error(`${e instanceof Error ? e.message : String(e)}\n\n${USAGE}`);
    process.exit(2);
  }
}

/** How often the runner checks that whoever started it (npm, a shell, an IDE) is still there. */
const PARENT_CHECK_MS = 500;

/**
 * Resolves with the first SIGINT/SIGTERM, or when the process that started this one is gone:
 * a supervisor that kills `npm run dev` may reach only npm or its shell, and the sandbox must not
 * outlive them. A second signal kills everything at once.
 */
function stopSignal(force: () => void): Promise<string> {
  return new Promise((resolve) => {
    let received = false;
    const on = (reason: string) => {
      if (received) force();
      received = true;
      resolve(reason);
    };
    process.on('SIGINT', on);
    process.on('SIGTERM', on);
    const parent = process.ppid;
    const watch = setInterval(() => {
      if (process.ppid === parent) return;
      clearInterval(watch);
      console.error('the process that started the sandbox is gone: stopping');
      on('parent exited');
    }, PARENT_CHECK_MS);
    watch.unref();
  });
}

/** Shows the summary until `stopped` resolves. */
async function live(sandbox: Sandbox, stopped: Promise<unknown>): Promise<void> {
  const sampler = new StatusSampler(sandbox);
  const tty = process.stdout.isTTY === true;
  let shown = 0;
  let done = false;
  void stopped.then(() => (done = true));
  while (!done) {
    const snapshot = await sampler.sample();
    sandbox.flushLogs();
    if (done) break;
    if (tty) {
      // Lines cut to the terminal's width: a wrapped line would throw off the in-place refresh.
      const width = process.stdout.columns || 200;
      const block = summaryBlock(snapshot).map((l) => l.slice(0, width - 1));
      // Up to the first line of the previous block, then clear below: the block updates in place.
      process.stdout.write((shown ? `\x1b[${shown}F\x1b[J` : '') + block.join('\n') + '\n');
      shown = block.length;
    } else {
      console.log(summaryLine(snapshot));
    }
    await Promise.race([
      stopped,
      new Promise((r) => setTimeout(r, tty ? TTY_REFRESH_MS : LINE_INTERVAL_MS)),
    ]);
  }
  await sampler.close();
}

async function main(): Promise<void> {
  const opts = options();
  if (opts.help) {
    console.log(USAGE);
    return;
  }
  let sandbox: Sandbox | undefined;
  const stopped = stopSignal(() => {
    console.error('second signal: killing every process now');
    for (const p of [...(sandbox?.watchers ?? []), ...(sandbox?.workers ?? [])])
      p.process.child.kill('SIGKILL');
    const redis = sandbox?.redis;
    void (redis?.owned ? redis.deployment.stop() : Promise.resolve()).then(() => process.exit(130));
  });
  let code = 0;
  try {
    console.log('starting the API emulator, Redis, 1 watcher and %d workers…', opts.workers);
    sandbox = await startSandbox(opts);
    const simulate = opts.simulateBackups
      ? `simulated: CronJobs run on a clock ${opts.clockFactor}× faster than real time`
      : undefined;
    console.log(banner(sandbox, simulate).join('\n'));
    const readiness = waitUntilReady(sandbox).then(() => true);
    // A signal during start wins the race; the readiness poll then ends with the process.
    readiness.catch(() => undefined);
    const ready = await Promise.race([readiness, stopped]);
    if (ready === true) {
      console.log(`\n${readyLine(sandbox)}\n`);
      await live(sandbox, stopped);
    }
  } catch (e) {
    console.error(`npm run dev: ${e instanceof Error ? e.message : String(e)}`);
    code = 1;
  }
  if (sandbox) {
    console.log('stopping: watcher and workers (SIGTERM), API emulator, Redis…');
    await sandbox.stop();
    console.log('sandbox stopped; nothing left running');
  }
  process.exit(code);
}

await main();
