/**
 * The docs cannot rot: the shell blocks of README.md and docs/*.md are run or checked here.
 *
 * Convention: a fenced shell block (```sh, bash, shell, zsh, console) is runnable when the last
 * non-blank line before its fence is the HTML comment `<!-- runnable -->` (invisible when rendered):
 *
 *     <!-- runnable -->
 *
 *     ```sh
 *     kubectl get bj -A
 *     ```
 *
 * Runnable blocks run in document order, one document after the other, each with `bash -e -o
 * pipefail` from the repository root and KUBECONFIG pointing at a sandbox (`npm run dev`'s entry)
 * in which the sample BackupJob has been applied and is Ready before each document starts. A
 * block must exit 0.
 *
 * Blocks that cannot run here (helm install against a real cluster, docker compose, npm ci) stay
 * unmarked; for every shell block the test checks that the repository paths it names exist, that
 * the `npm run` scripts it calls are defined and that `docker compose` has its compose file.
 * A marker that is not followed by a shell block fails, so a typo cannot silently skip a block.
 */
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { parse } from 'yaml';
import { startSandboxProcess, type RunningSandbox } from '../dev/sandbox-process.js';
import {
  codeBlocks,
  npmScripts,
  repositoryPaths,
  words,
  type CodeBlock,
} from './markdown-blocks.js';

const SAMPLE = 'config/samples/ops_v1alpha1_backupjob.yaml';
const RESET = `kubectl apply -f ${SAMPLE} && kubectl wait --for=condition=Ready bj/mysql-daily -n ops --timeout=120s`;

function documents(): string[] {
  const docs = readdirSync('docs')
    .filter((f) => f.endsWith('.md'))
    .sort()
    .map((f) => join('docs', f));
  return ['README.md', ...docs];
}

const topLevel = new Set(
  readdirSync('.').filter((e) => !['node_modules', 'dist', '.git', '.dev'].includes(e)),
);
const scripts = (JSON.parse(readFileSync('package.json', 'utf8')) as { scripts: object }).scripts;

const where = (b: CodeBlock) => `${b.file}:${b.line}`;

describe('shell blocks in README.md and docs/*.md', () => {
  const all = documents().map((file) => ({ file, ...codeBlocks(file) }));
  const shellBlocks = all.flatMap((d) => d.blocks).filter((b) => b.shell);

  test('every runnable marker stands before a shell block', () => {
    const stray = all.flatMap((d) => d.strayMarkers.map((line) => `${d.file}:${line}`));
    assert.deepEqual(stray, []);
    assert.ok(
      shellBlocks.some((b) => b.file === 'README.md' && b.runnable),
      'the README tour is marked runnable',
    );
  });

  test('every repository path a shell block names exists', () => {
    const missing = shellBlocks.flatMap((b) =>
      repositoryPaths(b.code, topLevel)
        .filter((p) => !existsSync(p))
        .map((p) => `${where(b)}: ${p}`),
    );
    assert.deepEqual(missing, []);
  });

  test('every npm run script a shell block calls is defined in package.json', () => {
    const unknown = shellBlocks.flatMap((b) =>
      npmScripts(b.code)
        .filter((s) => !Object.hasOwn(scripts, s))
        .map((s) => `${where(b)}: npm run ${s}`),
    );
    assert.deepEqual(unknown, []);
  });

  test('docker compose commands have their compose file', () => {
    const compose = shellBlocks.filter((b) => words(b.code).join(' ').includes('docker compose'));
    for (const b of compose) assert.ok(existsSync('docker-compose.yml'), where(b));
  });

  describe('runnable blocks, against a running sandbox', () => {
    let sandbox: RunningSandbox;
    before(async () => {
      sandbox = await startSandboxProcess();
    });
    after(() => sandbox?.cleanup());

    for (const { file, blocks } of all) {
      const runnable = blocks.filter((b) => b.runnable);
      if (runnable.length === 0) continue;
      test(`${file}: ${runnable.length} runnable block(s) exit 0, in order`, async () => {
        const reset = await sandbox.run(RESET);
        assert.equal(reset.code, 0, `reset: ${reset.stdout}${reset.stderr}`);
        for (const block of runnable) {
          const r = await sandbox.run(block.code);
          assert.equal(
            r.code,
            0,
            `${where(block)} exited ${r.code}:\n${block.code}\n--- stdout\n${r.stdout}--- stderr\n${r.stderr}`,
          );
        }
      });
    }
  });
});

/** The first-column code spans of the Markdown table rows that follow `heading`. */
function firstColumn(markdown: string, heading: string): string[] {
  const section = markdown.split(heading)[1]?.split(/\n## /)[0] ?? '';
  return section
    .split('\n')
    .filter((l) => l.startsWith('| `'))
    .flatMap((l) => [...l.split('|')[1]!.matchAll(/`([^`]+)`/g)].map((m) => m[1]!));
}

describe("README.md's tables follow their sources", () => {
  const readme = readFileSync('README.md', 'utf8');

  test('every environment variable of libs/config/README.md is in the configuration table', () => {
    const variables = firstColumn(readFileSync('libs/config/README.md', 'utf8'), '| Variable');
    assert.ok(variables.length > 10, 'libs/config/README.md lists the variables');
    const listed = new Set(firstColumn(readme, '## Configuration'));
    assert.deepEqual(
      variables.filter((v) => !listed.has(v)),
      [],
    );
  });

  test('every Helm value in the configuration table exists in values.yaml', () => {
    const values = parse(readFileSync('helm/backupjob-operator/values.yaml', 'utf8')) as object;
    const paths = firstColumn(readme, 'The Helm values that matter most');
    assert.ok(paths.length > 5, 'the README lists Helm values');
    const missing = paths.filter(
      (p) =>
        p
          .split('.')
          .reduce<unknown>(
            (node, key) =>
              node && typeof node === 'object' && key in node
                ? (node as Record<string, unknown>)[key]
                : undefined,
            values,
          ) === undefined,
    );
    assert.deepEqual(missing, []);
  });
});
