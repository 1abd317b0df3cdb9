import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { test } from 'node:test';

/** Installed by `scripts/install-node.sh <major>` (CI does it). */
function nodeBin(major: number): string {
  const bin = resolve(`.tools/node${major}/bin`);
  assert.ok(
    existsSync(join(bin, 'node')),
    `Node ${major} is missing: scripts/install-node.sh ${major}`,
  );
  return bin;
}

/** `npm run <script>` with the given Node first on PATH, as on a machine whose default Node is that one. */
function npmRun(bin: string, script: string, args: string[] = []) {
  return spawnSync('npm', ['run', script, '--', ...args], {
    encoding: 'utf8',
    env: { ...process.env, PATH: `${bin}:${process.env.PATH ?? ''}` },
  });
}

test('with Node 20 first on PATH, npm run dev stops with one line naming both versions and starts nothing', () => {
  const dir = mkdtempSync(join(tmpdir(), 'node20-dev-'));
  try {
    const run = npmRun(nodeBin(20), 'dev', ['--dir', join(dir, 'sandbox')]);
    assert.notEqual(run.status, 0);
    const lines = run.stderr.split('\n').filter((l) => l.includes('Node.js'));
    assert.equal(lines.length, 1, run.stderr);
    assert.match(
      lines[0]!,
      /^backupjob-operator needs Node\.js \^22\.19\.0 \|\| \^24\.0\.0 but found v20\.\d+\.\d+ .*: install Node 24 with "nvm install" \(reads \.nvmrc\)/,
    );
    // Neither the build nor the sandbox ran: no compiler output, no sandbox directory.
    assert.doesNotMatch(run.stdout, /> backupjob-operator@[\d.]+ build/);
    assert.equal(existsSync(join(dir, 'sandbox')), false);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('every other npm entry point refuses Node 20 before doing anything', () => {
  for (const script of [
    'test',
    'bench',
    'apiserver',
    'start:watcher',
    'start:worker',
    'start:local',
  ]) {
    const run = npmRun(nodeBin(20), script, ['--help']);
    assert.notEqual(run.status, 0, script);
    assert.match(run.stderr, /needs Node\.js .* but found v20\./, script);
    assert.doesNotMatch(run.stdout, /> backupjob-operator@[\d.]+ build/, script);
  }
});

test('every npm entry point the README says checks the Node version does so first', () => {
  const readme = readFileSync('README.md', 'utf8');
  const claim =
    /the entry points that run the operator or its tests \(([^)]*)\)\s+first check the version/.exec(
      readme.replace(/\n\s*/g, ' '),
    );
  assert.ok(claim, 'the README states which entry points check the version');
  const named = [...claim[1]!.matchAll(/`npm (?:run )?([\w:]+)`/g)].map((m) => m[1]!);
  assert.deepEqual(named.sort(), [
    'apiserver',
    'bench',
    'dev',
    'start:local',
    'start:watcher',
    'start:worker',
    'test',
  ]);
  const scripts = (
    JSON.parse(readFileSync('package.json', 'utf8')) as { scripts: Record<string, string> }
  ).scripts;
  for (const name of named) {
    assert.match(scripts[name] ?? '', /^node scripts\/check-node\.mjs && /, `npm run ${name}`);
  }
});

test('Node 22 passes the check', () => {
  const run = spawnSync(join(nodeBin(22), 'node'), ['scripts/check-node.mjs'], {
    encoding: 'utf8',
  });
  assert.equal(run.status, 0, run.stderr);
  assert.equal(run.stderr, '');
});
