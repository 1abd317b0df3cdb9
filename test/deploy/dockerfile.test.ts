import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { DockerfileParser, type Copy } from 'dockerfile-ast';
import { validate } from 'dockerfile-utils';

const text = readFileSync('Dockerfile', 'utf8');
const dockerfile = DockerfileParser.parse(text);
const instructions = dockerfile.getInstructions();
const messages = (dockerfileText: string): string[] =>
  validate(dockerfileText).map((d) =>
    typeof d.message === 'string' ? d.message : d.message.value,
  );
const ignorePatterns = (): string[] =>
  readFileSync('.dockerignore', 'utf8')
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l !== '' && !l.startsWith('#'));
// dockerfile-ast keeps flags such as --from apart from the arguments.
const copies = instructions
  .filter((i) => i.getKeyword() === 'COPY')
  .map((i) => ({
    from: (i as Copy).getFromFlag()?.getValue(),
    args: i.getArgumentsContent() ?? '',
  }));
const args = (keyword: string) =>
  instructions.filter((i) => i.getKeyword() === keyword).map((i) => i.getArgumentsContent() ?? '');

describe('Dockerfile', () => {
  test('passes the Dockerfile linter without a warning', () => {
    assert.deepEqual(messages(text), []);
  });

  test('the linter reports a broken Dockerfile', () => {
    const broken =
      'FROM node:24-bookworm-slim\nMAINTAINER someone\nWORKDIR app\nHEALTHCHECK --interval=abc CMD true\n';
    const found = messages(broken).join('\n');
    assert.match(found, /MAINTAINER has been deprecated/);
    assert.match(found, /WORKDIR paths should be absolute/);
  });

  test('builds in stages from a pinned Node 24 image, and every COPY --from names a stage', () => {
    const froms = dockerfile.getFROMs();
    assert.ok(froms.length >= 2, 'multi-stage');
    const nodeVersion = /^ARG NODE_VERSION=(\d+)\.(\d+)\.(\d+)$/m.exec(text);
    assert.equal(nodeVersion?.[1], '24', 'Node 24, pinned to a patch release');
    const stages = new Set<string>();
    for (const from of froms) {
      assert.match(from.getImageName() ?? '', /^node$/);
      assert.equal(from.getImageTag(), '${NODE_VERSION}-bookworm-slim');
      stages.add(from.getBuildStage() ?? '');
    }
    // Linters miss a misspelt stage name, which only fails at build time.
    const fromStages = copies.flatMap((c) => (c.from === undefined ? [] : [c.from]));
    assert.deepEqual(fromStages, ['production-dependencies', 'build']);
    for (const stage of fromStages)
      assert.ok(stages.has(stage), `COPY --from=${stage} names a stage`);
  });

  test('installs with npm ci, builds, and ships only production dependencies', () => {
    const runs = args('RUN');
    assert.ok(runs.includes('npm ci --no-audit --no-fund'), runs.join('\n'));
    assert.ok(runs.includes('npm run build'));
    assert.ok(runs.some((r) => r.startsWith('npm ci --omit=dev')));
    const runtime = text.slice(text.lastIndexOf('\nFROM '));
    assert.doesNotMatch(runtime, /\nRUN /, 'the runtime stage only copies');
    assert.match(runtime, /COPY --from=production-dependencies \/app\/node_modules/);
  });

  test('runs as a non-root user by number, the worker by default, and exposes the two ports', () => {
    const users = args('USER');
    assert.match(users.at(-1) ?? '', /^[1-9]\d*:[1-9]\d*$/);
    assert.equal(args('CMD').at(-1), '["node", "dist/apps/worker/src/main.js"]');
    assert.deepEqual(args('EXPOSE'), ['8080 8081']);
  });

  test('every COPY source exists and is sent in the build context; tests and outputs are not', () => {
    const patterns = ignorePatterns();
    assert.equal(patterns[0], '*', '.dockerignore denies by default');
    const sources = copies
      .filter((c) => c.from === undefined)
      .flatMap((c) => c.args.split(/\s+/).slice(0, -1));
    assert.ok(sources.length >= 4, sources.join(' '));
    for (const source of sources) {
      assert.ok(existsSync(source), `${source} exists`);
      assert.ok(sentToBuild(source.replace(/\/$/, ''), patterns), `${source} is not excluded`);
    }
    for (const kept of [
      'libs/rbac/src/permissions.ts',
      'libs/queue/src/addKeys-5.lua',
      'apps/worker/src',
      'tools/code-cache/main.ts',
      'config/crd/bases/ops.example.com_backupjobs.yaml',
    ]) {
      assert.equal(sentToBuild(kept, patterns), true, kept);
    }
    for (const left of [
      'libs/rbac/test/render.test.ts',
      'node_modules/yaml/package.json',
      'dist/apps',
      '.git/HEAD',
      'helm/backupjob-operator/values.yaml',
      'test/deploy/compose.test.ts',
      '.tools/helm/bin/helm',
      'tools/dev/main.ts',
      'config/samples/ops_v1alpha1_backupjob.yaml',
    ]) {
      assert.equal(sentToBuild(left, patterns), false, left);
    }
  });
});

/** Docker's .dockerignore rule: the last pattern matching the path or one of its parents wins. */
function sentToBuild(path: string, patterns: readonly string[]): boolean {
  const rules = patterns.map((line) => {
    const negated = line.startsWith('!');
    const glob = (negated ? line.slice(1) : line).replace(/\/$/, '');
    const source = glob
      .split('/')
      .map((part) =>
        part === '**'
          ? '(?:.*/)?'
          : part
              .replace(/[.+^${}()|[\]\\]/g, '\\$&')
              .replace(/\*/g, '[^/]*')
              .replace(/\?/g, '[^/]') + '/',
      )
      .join('')
      .replace(/\/$/, '');
    return { negated, regex: new RegExp(`^${source.replace(/\(\?:\.\*\/\)\?$/, '.*')}$`) };
  });
  const parts = path.split('/');
  let included = true;
  for (const rule of rules) {
    const hit = parts.some((_, i) => rule.regex.test(parts.slice(0, i + 1).join('/')));
    if (hit) included = rule.negated;
  }
  return included;
}
