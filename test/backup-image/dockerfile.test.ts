// No container engine or hadolint runs on the development machines, so the reference image's
// Dockerfile is held here to the hadolint rules and pod-security needs it was written for.
import assert from 'node:assert/strict';
import { readFileSync, statSync } from 'node:fs';
import { resolve } from 'node:path';
import { test } from 'node:test';

const dir = resolve(process.cwd(), 'images/backup');
const dockerfile = readFileSync(resolve(dir, 'Dockerfile'), 'utf8');

/** Instructions with their continuation lines joined, comments dropped. */
const instructions = dockerfile
  .replace(/\\\n/g, ' ')
  .split('\n')
  .map((line) => line.trim())
  .filter((line) => line !== '' && !line.startsWith('#'));

function all(keyword: string): string[] {
  return instructions.filter((line) => line.startsWith(`${keyword} `));
}

test('the base image has an explicit tag that is not latest (DL3006, DL3007)', () => {
  const from = all('FROM');
  assert.equal(from.length, 1);
  assert.match(from[0] ?? '', /^FROM [a-z0-9./-]+:(?!latest\b)[\w.-]+( |$)/);
});

test('apt-get installs pinned versions without recommends and drops its lists (DL3008, DL3015, DL3009)', () => {
  const run = all('RUN').join(' ');
  const install = /apt-get install ([^&]+)&&/.exec(run);
  assert.ok(install, 'an apt-get install');
  const words = (install[1] ?? '').trim().split(/\s+/);
  assert.ok(words.includes('-y') && words.includes('--no-install-recommends'));
  const packages = words.filter((word) => !word.startsWith('-'));
  assert.ok(packages.length >= 2);
  for (const pkg of packages)
    assert.match(pkg, /^'?[a-z0-9.+-]+=\S+$/, `${pkg} has a pinned version`);
  assert.match(run, /rm -rf \/var\/lib\/apt\/lists\/\*/);
  assert.equal(all('RUN').length, 1, 'one RUN layer (DL3059)');
});

test('the image runs as a numeric non-root user, so Kubernetes can verify runAsNonRoot (DL3002)', () => {
  const user = all('USER').at(-1);
  assert.match(user ?? '', /^USER ([1-9]\d*)(:[1-9]\d*)?$/);
  assert.match(all('RUN').join(' '), /useradd .*--no-log-init .*--uid 10001/, 'DL3046');
});

test('the entry point is the copied script, in exec form (DL3025), and the build context admits it', () => {
  const copy = /^COPY backup\.sh (\/\S+)$/.exec(all('COPY')[0] ?? '');
  assert.ok(copy, 'COPY backup.sh to an absolute path');
  assert.deepEqual(all('ENTRYPOINT'), [`ENTRYPOINT ["${copy[1]}"]`]);
  assert.equal(all('ADD').length, 0, 'COPY, not ADD (DL3020)');
  const ignore = readFileSync(resolve(dir, '.dockerignore'), 'utf8').split('\n');
  assert.ok(ignore.includes('!backup.sh'));
  assert.equal(statSync(resolve(dir, 'backup.sh')).mode & 0o755, 0o755, 'the script is executable');
});

test('no credentials are baked into the image', () => {
  for (const line of [...all('ENV'), ...all('ARG')]) {
    assert.doesNotMatch(line, /PASSWORD|PWD|SECRET|TOKEN/i);
  }
});
