import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { builtinModules } from 'node:module';
import {
  cpSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { build, type BuildOptions } from 'esbuild';
import { startProcess } from '#testing';
import { codeCacheOf, loadBundle, writeCodeCache } from '../src/bundle-loader.js';

const APPS = ['watcher', 'worker'] as const;
const BUNDLE = 'app.cjs';
const bundleOf = (app: string) => new URL(`../../../apps/${app}/bundle/`, import.meta.url);

describe('the app bundles npm run build makes', () => {
  test('each requires and imports nothing but Node’s own modules: what it runs is inside it', async () => {
    const builtins = new Set([...builtinModules, ...builtinModules.map((m) => `node:${m}`)]);
    // Tried and done without: debug's colours, and the packages the build leaves out.
    const optional = new Set(['supports-color', ...(await bundleFormat()).notInstalled]);
    const allowed = (specifier: string) =>
      optional.has(specifier) || optional.has(specifier.replace(/\/[^/]+$/, '/*'));
    for (const app of APPS) {
      const code = readFileSync(new URL(BUNDLE, bundleOf(app)), 'utf8');
      const required = [...code.matchAll(/\brequire\("([^"]+)"\)/g)].map((m) => m[1]!);
      assert.ok(required.length > 0, `${app}: the bundle's requires were found`);
      for (const specifier of required) {
        assert.ok(builtins.has(specifier) || allowed(specifier), `${app} requires ${specifier}`);
      }
      // A bundle cannot import() at all (bundle-loader.ts): not even Node's own modules.
      for (const [, specifier] of code.matchAll(/[^\w.$]import\("([^"]+)"\)/g)) {
        assert.ok(allowed(specifier!), `${app} imports ${specifier}`);
      }
    }
  });

  test('each loads with the code cache the build made beside it, and without one', () => {
    for (const app of APPS) {
      const file = fileURLToPath(new URL(BUNDLE, bundleOf(app)));
      const load = (env: Record<string, string> = {}) =>
        execFileSync(
          process.execPath,
          [
            '--input-type=module',
            '-e',
            [
              `import { loadBundle } from ${JSON.stringify(new URL('../src/bundle-loader.js', import.meta.url).href)};`,
              `const { app, codeCacheUsed } = loadBundle(${JSON.stringify(file)});`,
              'console.log(typeof app.start, codeCacheUsed);',
              'process.exit(0);',
            ].join('\n'),
          ],
          { encoding: 'utf8', env: { ...process.env, ...env } },
        ).trim();
      assert.equal(load(), 'function true', app);
      assert.equal(load({ NODE_DISABLE_COMPILE_CACHE: '1' }), 'function false', app);
    }
  });

  test('each code cache holds more than loading the bundle compiles: the build trained it on a start', () => {
    const dir = mkdtempSync(join(tmpdir(), 'loaded-only-'));
    try {
      for (const app of APPS) {
        // A cache taken after loading alone, for a copy of the bundle (with the Lua scripts that
        // loading reads from beside it), is the yardstick.
        const copy = join(dir, app);
        cpSync(fileURLToPath(bundleOf(app)), copy, { recursive: true });
        writeCodeCache(join(copy, BUNDLE));
        const loaded = statSync(codeCacheOf(join(copy, BUNDLE))).size;
        const trained = statSync(codeCacheOf(fileURLToPath(new URL(BUNDLE, bundleOf(app))))).size;
        assert.ok(
          trained > loaded * 1.1,
          `${app}: ${trained} bytes against ${loaded} after loading`,
        );
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test('neither carries client-node’s generated models: both talk through the project’s REST client', () => {
    // The map's sources are the files that put code into the bundle.
    const models = (app: string) =>
      (
        JSON.parse(readFileSync(new URL(`${BUNDLE}.map`, bundleOf(app)), 'utf8')) as {
          sources: string[];
        }
      ).sources.filter((f) => /@kubernetes\/client-node\/.*gen\/models\//.test(f)).length;
    for (const app of APPS) assert.equal(models(app), 0, app);
  });

  test('their source maps map the project’s code only: the first stack a process formats decodes that, not every package inside', async () => {
    const { decodeMappings } = await sourceMapTools();
    for (const app of APPS) {
      const map = JSON.parse(readFileSync(new URL(`${BUNDLE}.map`, bundleOf(app)), 'utf8')) as {
        sources: string[];
        mappings: string;
      };
      const mapped = new Map<string, number>();
      for (const line of decodeMappings(map.mappings)) {
        for (const [, source] of line) {
          const file = map.sources[source!]!;
          mapped.set(file, (mapped.get(file) ?? 0) + 1);
        }
      }
      const packages = [...mapped.keys()].filter((f) => f.includes('/node_modules/'));
      assert.deepEqual(packages, [], `${app}: mappings into packages`);
      const own = [...mapped.keys()].filter((f) => f.endsWith(`apps/${app}/src/app.ts`));
      assert.equal(own.length, 1, `${app}: its app.ts is mapped`);
    }
  });

  test('launch runs the app in the bundle: a bad variable stops it with a message naming it', async () => {
    const child = startProcess({
      name: 'watcher',
      command: process.execPath,
      args: [
        '--input-type=module',
        '-e',
        [
          `import { launch } from ${JSON.stringify(new URL('../src/launch.js', import.meta.url).href)};`,
          `const bundle = new URL('${BUNDLE}', ${JSON.stringify(bundleOf('watcher').href)});`,
          `process.env.QUEUE_SHARDS = '0';`,
          'await launch(bundle);',
        ].join('\n'),
      ],
      env: { KUBECONFIG: '/nonexistent' },
    });
    assert.equal(await child.exited, 1);
    assert.match(child.lines.join('\n'), /invalid configuration: .*QUEUE_SHARDS/);
  });
});

describe('the code cache of a bundle', () => {
  const script = (answer: string) =>
    `(function (exports, require, module, __filename, __dirname) {'use strict';exports.start = async () => '${answer}';})`;
  const answerOf = async (file: string) => {
    const { app, codeCacheUsed } = loadBundle(file);
    return { answer: (await app.start()) as unknown, codeCacheUsed };
  };

  test('is used for the bundle it was made from, and not for another of the same length', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'code-cache-'));
    try {
      const file = join(dir, BUNDLE);
      writeFileSync(file, script('first'));
      writeCodeCache(file);
      assert.deepEqual(await answerOf(file), { answer: 'first', codeCacheUsed: true });
      // V8 checks only a source's length; the checksum in the cache tells the two apart.
      writeFileSync(file, script('other'));
      assert.deepEqual(await answerOf(file), { answer: 'other', codeCacheUsed: false });
      writeFileSync(codeCacheOf(file), 'not a cache');
      assert.deepEqual(await answerOf(file), { answer: 'other', codeCacheUsed: false });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
  test('written by a running app, holds what the app ran after loading, and is used', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'code-cache-'));
    try {
      const file = join(dir, BUNDLE);
      // A function only start() calls, large enough that its bytecode shows in the cache's size.
      const cases = Array.from({ length: 400 }, (_, i) => `case ${i}: return 'v${i}' + n;`);
      writeFileSync(
        file,
        `(function (exports, require, module, __filename, __dirname) {'use strict';` +
          `function ranLater(n) { switch (n) { ${cases.join(' ')} } return 'trained'; }` +
          `exports.start = async () => ranLater(-1);})`,
      );
      writeCodeCache(file);
      const loadedOnly = readFileSync(codeCacheOf(file)).length;
      const started = loadBundle(file);
      assert.equal(await started.app.start(), 'trained');
      started.writeCodeCache();
      const trained = readFileSync(codeCacheOf(file)).length;
      assert.ok(trained > loadedOnly + 2000, `${trained} bytes against ${loadedOnly} when loaded`);
      assert.deepEqual(await answerOf(file), { answer: 'trained', codeCacheUsed: true });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('stack traces of a bundle', () => {
  test('name the TypeScript source, line and column, through the bundle’s source map; a package’s frame keeps its name and bundle position', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'stack-traces-'));
    try {
      writeFileSync(
        join(dir, 'thrower.ts'),
        [
          "import { callBack } from 'pkg';",
          '',
          'export async function start(): Promise<void> {',
          '  await Promise.resolve();',
          '  callBack(fail);',
          '}',
          '',
          'function fail(): never {',
          "  throw new Error('from inside the bundle');",
          '}',
        ].join('\n'),
      );
      mkdirSync(join(dir, 'node_modules', 'pkg'), { recursive: true });
      writeFileSync(join(dir, 'node_modules', 'pkg', 'package.json'), '{"main": "index.js"}');
      writeFileSync(
        join(dir, 'node_modules', 'pkg', 'index.js'),
        'exports.callBack = function callBack(fn) {\n  fn();\n};\n',
      );
      await build({
        entryPoints: [join(dir, 'thrower.ts')],
        outfile: join(dir, BUNDLE),
        bundle: true,
        ...(await bundleFormat()).bundleFormat,
        platform: 'node',
        sourcemap: 'linked',
        sourcesContent: false,
        minifyWhitespace: true,
        keepNames: true,
        logLevel: 'error',
      });
      const mapFile = join(dir, `${BUNDLE}.map`);
      writeFileSync(
        mapFile,
        JSON.stringify(
          (await sourceMapTools()).keepOwnSources(JSON.parse(readFileSync(mapFile, 'utf8'))),
        ),
      );
      const child = startProcess({
        name: 'thrower',
        command: process.execPath,
        args: [
          '--input-type=module',
          '-e',
          [
            `import { launch } from ${JSON.stringify(new URL('../src/launch.js', import.meta.url).href)};`,
            `await launch(new URL(${JSON.stringify(pathToFileURL(join(dir, BUNDLE)).href)}));`,
          ].join('\n'),
        ],
      });
      assert.equal(await child.exited, 1);
      const output = child.lines.join('\n');
      const source = join(dir, 'thrower.ts');
      assert.match(output, /Error: from inside the bundle/);
      assert.ok(output.includes(`at fail (${source}:9:9)`), output);
      assert.match(output, /at callBack \(\/\S*\/app\.cjs:\d+:\d+\)/);
      assert.ok(!output.includes('node_modules/pkg'), output);
      assert.ok(output.includes(`start (${source}:5:3)`), output);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

interface SourceMapTools {
  keepOwnSources(map: unknown): unknown;
  /** Per generated line, its segments: [column, source, line, column, name?], absolute. */
  decodeMappings(mappings: string): number[][][];
}

/** The build's source-map trimmer (scripts/own-source-map.mjs), as bundle.mjs runs it. */
async function sourceMapTools(): Promise<SourceMapTools> {
  const url = new URL('../../../../scripts/own-source-map.mjs', import.meta.url);
  return (await import(url.href)) as SourceMapTools;
}

/** How the apps' bundles are written (scripts/bundle-format.mjs), for a bundle built here. */
async function bundleFormat(): Promise<{ bundleFormat: BuildOptions; notInstalled: string[] }> {
  const url = new URL('../../../../scripts/bundle-format.mjs', import.meta.url);
  return (await import(url.href)) as { bundleFormat: BuildOptions; notInstalled: string[] };
}
