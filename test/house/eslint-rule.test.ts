import assert from 'node:assert/strict';
import { resolve } from 'node:path';
import { describe, test } from 'node:test';
import { pathToFileURL } from 'node:url';
import { ESLint, Linter } from 'eslint';
import tseslint from 'typescript-eslint';

// The plugin is plain JavaScript beside the ESLint config, which loads it without a build.
const { default: house } = (await import(
  pathToFileURL(resolve('scripts/library-boundaries.mjs')).href
)) as { default: ESLint.Plugin };

const RULE = 'house/relative-imports-stay-inside';
const linter = new Linter({ configType: 'flat' });
const config: Linter.Config[] = [
  {
    files: ['**/*.ts'],
    languageOptions: { parser: tseslint.parser as Linter.Parser },
    plugins: { house },
    rules: { [RULE]: 'error' },
  },
];

/** The rule's messages for `code` as if it were the file `path` of this repository. */
const lint = (path: string, code: string) =>
  linter.verify(code, config, { filename: resolve(path) }).map((m) => m.message);

describe(`ESLint rule ${RULE}`, () => {
  test('reports a relative import into another library, and names the way out', () => {
    assert.deepEqual(
      lint('libs/runtime/src/a.ts', "import { Logger } from '../../observability/src/index.js';"),
      [
        "'../../observability/src/index.js' leaves libs/runtime for libs/observability: import it by its #name from package.json imports",
      ],
    );
  });

  test('reports type imports, re-exports and import() that leave, from tests and tools too', () => {
    const code = [
      "import type { A } from '../../kube/src/types.js';",
      "export * from '../../api/src/index.js';",
      "export { b } from '../../../tools/dev/args.js';",
      "const c = await import('../../queue/src/index.js');",
    ].join('\n');
    assert.equal(lint('libs/controller/src/a.ts', code).length, 4);
    assert.equal(lint('test/e2e/a.test.ts', "import '../../libs/api/src/index.js';").length, 1);
    assert.equal(lint('tools/dev/a.ts', "import '../../bench/lib/prom.js';").length, 1);
    assert.equal(lint('apps/worker/src/a.ts', "import '../../watcher/src/x.js';").length, 1);
  });

  test('lets relative imports inside a library, app or top folder, and #names, pass', () => {
    const inside = [
      ['libs/queue/test/a.test.ts', "import { WorkQueue } from '../src/index.js';"],
      ['libs/queue/src/a.ts', "export * from './shard.js';"],
      ['apps/watcher/src/main.ts', "import { WatchLoop } from './watch-loop.js';"],
      ['test/faults/a.test.ts', "import { getBackupJob } from '../e2e/support.js';"],
      ['bench/scenarios/a.ts', "import { stats } from '../lib/stats.js';"],
      ['libs/runtime/src/a.ts', "import { Logger } from '#observability';"],
      ['test/dev/a.test.ts', "import { parseDevArgs } from '#tools/dev/args';"],
    ];
    for (const [path, code] of inside) assert.deepEqual(lint(path!, code!), [], path);
  });

  test('is on for every TypeScript file of the repository', async () => {
    const eslint = new ESLint();
    for (const path of [
      'libs/queue/src/index.ts',
      'apps/worker/src/main.ts',
      'test/e2e/support.ts',
    ]) {
      const config = await eslint.calculateConfigForFile(path);
      assert.deepEqual(config?.rules?.[RULE], [2], path);
    }
  });
});
