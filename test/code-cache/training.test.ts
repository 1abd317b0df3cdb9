import assert from 'node:assert/strict';
import { cpSync, mkdtempSync, rmSync, statSync, symlinkSync, utimesSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { runCommand } from '#testing';

// The tests run the build's last step on a copy of dist/, so that the caches the suite's own
// processes load stay as they are. Packages resolve through a node_modules link beside the copy.
const dist = resolve(fileURLToPath(new URL('../..', import.meta.url)));
const root = dirname(dist);
const APPS = ['watcher', 'worker'] as const;
let dir: string;
const copy = (path: string) => join(dir, 'dist', path);
const cacheOf = (app: string) => copy(`apps/${app}/bundle/app.cjs.cache`);

/** Whether V8 takes each copied bundle's cache, as `launch` loads it (no V8 flags). */
async function cachesUsed(): Promise<string> {
  const loads = await runCommand(process.execPath, [
    '--input-type=module',
    '-e',
    [
      `import { loadBundle } from ${JSON.stringify(`file://${copy('libs/runtime/src/bundle-loader.js')}`)};`,
      `for (const app of ${JSON.stringify(APPS)})`,
      `  console.log(app, loadBundle(${JSON.stringify(copy('apps'))} + '/' + app + '/bundle/app.cjs').codeCacheUsed);`,
      'process.exit(0);',
    ].join('\n'),
  ]);
  assert.equal(loads.code, 0, loads.stderr);
  return loads.stdout.trim();
}

/** Makes the copy's caches older than the code that makes them, so the build makes them anew. */
function staleCaches(): void {
  for (const app of APPS) utimesSync(cacheOf(app), 0, 0);
}

describe('the code caches npm run build trains', () => {
  before(() => {
    dir = mkdtempSync(join(tmpdir(), 'code-cache-build-'));
    // Timestamps kept: the bundles stay newer than their inputs, so only the caches are made.
    cpSync(dist, join(dir, 'dist'), { recursive: true, preserveTimestamps: true });
    symlinkSync(join(root, 'node_modules'), join(dir, 'node_modules'));
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  test('are trained in an environment of their own: the caller’s NODE_OPTIONS and operator settings do not reach the run', async () => {
    staleCaches();
    const built = await runCommand(process.execPath, [join(root, 'scripts', 'bundle.mjs')], {
      env: {
        OUT_DIR: join(dir, 'dist'),
        // A V8 flag would make V8 refuse the caches; these two would stop the apps at start.
        NODE_OPTIONS: '--jitless',
        QUEUE_SHARDS: '0',
        REDIS_CLUSTER_NODES: '127.0.0.1:1',
      },
      timeoutMs: 120_000,
    });
    assert.equal(built.code, 0, `${built.stdout}\n${built.stderr}`);
    assert.match(built.stdout, /code caches: trained on a start and one BackupJob made Ready/);
    assert.equal(await cachesUsed(), 'watcher true\nworker true');
  });

  test('without a redis-server on PATH, hold what loading compiles, used all the same, and the build says so', async () => {
    // The suite's own build trained the caches in dist/.
    const trained = APPS.map(
      (app) => statSync(join(dist, `apps/${app}/bundle/app.cjs.cache`)).size,
    );
    staleCaches();
    const made = await runCommand(process.execPath, [copy('tools/code-cache/main.js')], {
      env: { PATH: dirname(process.execPath) },
      timeoutMs: 60_000,
    });
    assert.equal(made.code, 0, `${made.stdout}\n${made.stderr}`);
    assert.match(made.stdout, /code caches: no redis-server on PATH to train them on/);
    APPS.forEach((app, i) => {
      const loadedOnly = statSync(cacheOf(app)).size;
      assert.ok(
        loadedOnly * 1.1 < trained[i]!,
        `${app}: ${loadedOnly} bytes against ${trained[i]} trained`,
      );
    });
    assert.equal(await cachesUsed(), 'watcher true\nworker true');
  });
});
