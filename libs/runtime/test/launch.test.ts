import assert from 'node:assert/strict';
import { builtinModules } from 'node:module';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { pathToFileURL } from 'node:url';
import { build } from 'esbuild';
import { startProcess } from '#testing';

const APPS = ['watcher', 'worker'] as const;
const bundleOf = (app: string) => new URL(`../../../apps/${app}/bundle/`, import.meta.url);

describe('the app bundles npm run build makes', () => {
  test('each imports nothing but Node’s own modules: what it runs is inside it', () => {
    const builtins = new Set([...builtinModules, ...builtinModules.map((m) => `node:${m}`)]);
    for (const app of APPS) {
      const code = readFileSync(new URL('app.js', bundleOf(app)), 'utf8');
      const specifiers = [...code.matchAll(/(?:^|[;\n}])\s*import\s*[^'"();]*?from\s*"([^"]+)"/g)];
      assert.ok(specifiers.length > 0, `${app}: the bundle's imports were found`);
      for (const [, specifier] of specifiers) {
        assert.ok(builtins.has(specifier!), `${app} imports ${specifier}`);
      }
    }
  });

  test('neither carries client-node’s generated models: both talk through the project’s REST client', () => {
    // The map's sources are the files that put code into the bundle.
    const models = (app: string) =>
      (
        JSON.parse(readFileSync(new URL('app.js.map', bundleOf(app)), 'utf8')) as {
          sources: string[];
        }
      ).sources.filter((f) => /@kubernetes\/client-node\/.*gen\/models\//.test(f)).length;
    for (const app of APPS) assert.equal(models(app), 0, app);
  });

  test('their source maps map the project’s code only: the first stack a process formats decodes that, not every package inside', async () => {
    const { decodeMappings } = await sourceMapTools();
    for (const app of APPS) {
      const map = JSON.parse(readFileSync(new URL('app.js.map', bundleOf(app)), 'utf8')) as {
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
          `const bundle = new URL('app.js', ${JSON.stringify(bundleOf('watcher').href)});`,
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
        outfile: join(dir, 'app.js'),
        bundle: true,
        format: 'esm',
        platform: 'node',
        sourcemap: 'linked',
        sourcesContent: false,
        minifyWhitespace: true,
        keepNames: true,
        logLevel: 'error',
      });
      const mapFile = join(dir, 'app.js.map');
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
            `await launch(new URL(${JSON.stringify(pathToFileURL(join(dir, 'app.js')).href)}));`,
          ].join('\n'),
        ],
      });
      assert.equal(await child.exited, 1);
      const output = child.lines.join('\n');
      const source = join(dir, 'thrower.ts');
      assert.match(output, /Error: from inside the bundle/);
      assert.ok(output.includes(`at fail (${source}:9:9)`), output);
      assert.match(output, /at callBack \(file:\/\/\S*\/app\.js:\d+:\d+\)/);
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
