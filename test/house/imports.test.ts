import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { describe, test } from 'node:test';
import {
  escapingImports,
  fileCircles,
  importGraph,
  layerViolations,
  libraryCircles,
  mismatchedNames,
  resolveSpecifier,
  selfContainedViolations,
  sourceFiles,
  specifiersOf,
  unplacedLibraries,
  type Edge,
  type PackageImports,
} from './graph.js';
import { HOUSE, type Layering } from './layers.js';

const imports = (JSON.parse(readFileSync('package.json', 'utf8')) as { imports: PackageImports })
  .imports;
const files = sourceFiles(process.cwd());
const { edges, unresolved } = importGraph(process.cwd(), files, imports);
const libraries = readdirSync('libs', { withFileTypes: true })
  .filter((d) => d.isDirectory())
  .map((d) => d.name);

describe('the house: how the files of apps/, libs/, tools/, bench/ and test/ import each other', () => {
  test('the check sees the whole tree', () => {
    for (const top of ['apps', 'libs', 'tools', 'bench', 'test']) {
      assert.ok(
        files.some((f) => f.startsWith(`${top}/`)),
        `${top}/ is read`,
      );
    }
    assert.ok(files.includes('apps/worker/src/main.ts'), 'apps');
    assert.ok(files.includes('test/house/imports.test.ts'), 'test');
    assert.ok(edges.some((e) => e.specifier === '#queue' && e.to === 'libs/queue/src/index.ts'));
    assert.ok(edges.length > 1000, `${edges.length} imports`);
  });

  test('every #name is in package.json imports, and every import names a file that exists', () => {
    assert.deepEqual(unresolved, []);
    assert.deepEqual(
      edges.filter((e) => !existsSync(e.to)).map((e) => `${e.from}: ${e.specifier}`),
      [],
    );
  });

  test('each #name maps a TypeScript source to its compiled place in dist/', () => {
    assert.deepEqual(mismatchedNames(imports), []);
  });

  test('no import circles between files', () => {
    assert.deepEqual(fileCircles(edges), []);
  });

  test('no relative import leaves its library, app or top folder', () => {
    assert.deepEqual(escapingImports(edges), []);
  });

  test('every library has its place in the layers', () => {
    assert.deepEqual(unplacedLibraries(libraries, HOUSE), []);
  });

  test('imports go down the layers, and test support only into tests', () => {
    assert.deepEqual(layerViolations(edges, HOUSE), []);
  });

  test('the libraries form no circle', () => {
    assert.deepEqual(libraryCircles(edges), []);
  });

  test('observability and kube import no other library of the project', () => {
    assert.deepEqual(selfContainedViolations(edges, HOUSE), []);
  });
});

describe('the house checks find what they look for', () => {
  const edge = (from: string, to: string, specifier = '#x'): Edge => ({ from, to, specifier });
  const house: Layering = {
    layers: [
      { name: 'bottom', libraries: ['low', 'free'] },
      { name: 'top', libraries: ['high', 'peer'] },
    ],
    testSupport: ['helpers'],
    selfContained: ['free'],
  };

  test('imports are read from declarations, re-exports, import() and import types', () => {
    const text = [
      "import a from './a.js';",
      "import type { B } from '#b';",
      "export * from '../c.js';",
      "export { d } from 'd';",
      "const e = await import('./e.js');",
      "type F = typeof import('#f');",
      "import 'g';",
    ].join('\n');
    assert.deepEqual(specifiersOf('x.ts', text), [
      './a.js',
      '#b',
      '../c.js',
      'd',
      './e.js',
      '#f',
      'g',
    ]);
  });

  test('a specifier resolves to its source file: relative, #name, #name/* pattern; not a package', () => {
    const names: PackageImports = {
      '#q': { types: './libs/q/src/index.ts', default: './dist/libs/q/src/index.js' },
      '#t/*': { types: './tools/*.ts', default: './dist/tools/*.js' },
    };
    assert.equal(resolveSpecifier('libs/q/src/a.ts', '../test/b.js', names), 'libs/q/test/b.ts');
    assert.equal(resolveSpecifier('apps/w/src/main.ts', '#q', names), 'libs/q/src/index.ts');
    assert.equal(resolveSpecifier('test/x.test.ts', '#t/dev/args', names), 'tools/dev/args.ts');
    assert.equal(resolveSpecifier('test/x.test.ts', '#nope', names), undefined);
    assert.equal(resolveSpecifier('test/x.test.ts', 'yaml', names), undefined);
  });

  test('a #name whose compiled file is elsewhere than its source', () => {
    const names: PackageImports = {
      '#q': { types: './libs/q/src/index.ts', default: './dist/libs/q/src/main.js' },
    };
    assert.equal(mismatchedNames(names).length, 1);
  });

  test('a circle of two files and one of three; a file that imports itself', () => {
    assert.deepEqual(
      fileCircles([
        edge('a.ts', 'b.ts'),
        edge('b.ts', 'a.ts'),
        edge('c.ts', 'd.ts'),
        edge('d.ts', 'e.ts'),
        edge('e.ts', 'c.ts'),
        edge('e.ts', 'f.ts'),
        edge('g.ts', 'g.ts'),
      ]),
      [['a.ts', 'b.ts'], ['c.ts', 'd.ts', 'e.ts'], ['g.ts']],
    );
  });

  test('a relative import into another library, app or top folder', () => {
    assert.deepEqual(
      escapingImports([
        edge('libs/q/src/a.ts', 'libs/k/src/index.ts', '../../k/src/index.js'),
        edge('test/e2e/a.test.ts', 'tools/dev/args.ts', '../../tools/dev/args.js'),
        edge('libs/q/test/a.test.ts', 'libs/q/src/index.ts', '../src/index.js'),
        edge('test/e2e/a.test.ts', 'test/dev/b.ts', '../dev/b.js'),
        edge('libs/q/test/a.test.ts', 'libs/k/src/index.ts', '#k'),
      ]),
      [
        "libs/q/src/a.ts: '../../k/src/index.js' leaves libs/q",
        "test/e2e/a.test.ts: '../../tools/dev/args.js' leaves test",
      ],
    );
  });

  test('a library without a layer, and a placed library that is gone', () => {
    assert.deepEqual(unplacedLibraries(['low', 'free', 'high', 'helpers', 'new'], house), [
      'libs/new has no layer',
      'peer is placed but not in libs/',
    ]);
  });

  test('an import up the layers, test support or test code in shipped code, a reach into tools', () => {
    const problems = layerViolations(
      [
        edge('libs/low/src/a.ts', 'libs/high/src/index.ts'),
        edge('libs/high/src/a.ts', 'apps/w/src/main.ts'),
        edge('libs/high/src/a.ts', 'libs/helpers/src/index.ts'),
        edge('apps/w/src/main.ts', 'libs/low/test/cluster.ts'),
        edge('libs/helpers/src/a.ts', 'tools/dev/args.ts'),
        edge('libs/low/src/a.ts', 'libs/low/test/fixtures.ts', '../test/fixtures.js'),
      ],
      house,
    );
    assert.deepEqual(problems, [
      "libs/low/src/a.ts: '#x' goes up from libs/low (bottom) to libs/high (top)",
      "libs/high/src/a.ts: '#x' goes up from libs/high (top) to apps/w (apps)",
      "libs/high/src/a.ts: '#x' is test support",
      "apps/w/src/main.ts: '#x' is test code",
      "libs/helpers/src/a.ts: '#x' reaches into tools/",
      "libs/low/src/a.ts: '../test/fixtures.js' is test code",
    ]);
  });

  test('what the layers allow: down, across a layer, test support in tests, anything from test/', () => {
    assert.deepEqual(
      layerViolations(
        [
          edge('apps/w/src/main.ts', 'libs/low/src/index.ts'),
          edge('libs/high/src/a.ts', 'libs/low/src/index.ts'),
          edge('libs/high/src/a.ts', 'libs/peer/src/index.ts'),
          edge('libs/low/test/a.test.ts', 'libs/helpers/src/index.ts'),
          edge('libs/helpers/src/a.ts', 'libs/high/src/index.ts'),
          edge('libs/peer/test/a.test.ts', 'libs/high/test/cluster.ts'),
          edge('test/e2e/a.test.ts', 'tools/dev/args.ts'),
          edge('bench/main.ts', 'libs/high/test/stress.ts'),
        ],
        house,
      ),
      [],
    );
  });

  test('two libraries of a layer that import each other', () => {
    assert.deepEqual(
      libraryCircles([
        edge('libs/high/src/a.ts', 'libs/peer/src/index.ts'),
        edge('libs/peer/src/b.ts', 'libs/high/src/index.ts'),
        edge('libs/low/test/a.test.ts', 'libs/free/src/index.ts'),
        edge('libs/free/src/a.ts', 'libs/low/src/index.ts'),
      ]),
      [['libs/high', 'libs/peer']],
    );
  });

  test('a self-contained library that imports another; its tests may use test support', () => {
    assert.deepEqual(
      selfContainedViolations(
        [
          edge('libs/free/src/a.ts', 'libs/low/src/index.ts'),
          edge('libs/free/src/a.ts', 'libs/free/src/b.ts', './b.js'),
          edge('libs/free/test/a.test.ts', 'libs/helpers/src/index.ts'),
        ],
        house,
      ),
      ["libs/free/src/a.ts: '#x' is another library"],
    );
  });
});
