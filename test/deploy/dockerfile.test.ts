import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { DockerfileParser } from 'dockerfile-ast';
import { validate } from 'dockerfile-utils';

const text = readFileSync('Dockerfile', 'utf8');
const dockerfile = DockerfileParser.parse(text);
const instructions = dockerfile.getInstructions();
const messages = (dockerfileText: string): string[] =>
  validate(dockerfileText).map((d) =>
    typeof d.message === 'string' ? d.message : d.message.value,
  );
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
    for (const copy of args('COPY').filter((a) => a.startsWith('--from='))) {
      const stage = /^--from=(\S+)/.exec(copy)![1]!;
      assert.ok(stages.has(stage), `COPY --from=${stage} names a stage`);
    }
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

  test('.dockerignore keeps dependencies, outputs and tests out of the build context', () => {
    const ignore = readFileSync('.dockerignore', 'utf8').split('\n');
    assert.equal(
      ignore.find((l) => l && !l.startsWith('#')),
      '*',
      'deny by default',
    );
    for (const kept of ['!package.json', '!package-lock.json', '!apps/', '!libs/'])
      assert.ok(ignore.includes(kept), kept);
    for (const left of ['**/test/', '**/node_modules/']) assert.ok(ignore.includes(left), left);
  });
});
