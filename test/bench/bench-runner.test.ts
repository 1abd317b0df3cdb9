import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { test } from 'node:test';

const main = fileURLToPath(new URL('../../bench/main.js', import.meta.url));

test('the bench runner runs one quick scenario end to end and writes its results, named to the second, and report', () => {
  const dir = mkdtempSync(join(tmpdir(), 'bench-smoke-'));
  try {
    const results = join(dir, 'results');
    const docs = join(dir, 'docs');
    const run = spawnSync(
      process.execPath,
      [
        main,
        '--quick',
        '--scenario',
        'coalescing',
        '--systems',
        'baseline',
        '--results-dir',
        results,
        '--docs-dir',
        docs,
      ],
      { encoding: 'utf8', timeout: 120_000 },
    );
    assert.equal(run.status, 0, `bench exited ${run.status}:\n${run.stderr}`);
    const files = readdirSync(results).filter((f) => f.endsWith('-quick.json'));
    assert.equal(files.length, 1);
    assert.match(files[0] as string, /^\d{4}-\d{2}-\d{2}T\d{6}Z-quick\.json$/);
    const parsed = JSON.parse(readFileSync(join(results, files[0] as string), 'utf8'));
    assert.equal(parsed.size, 'quick');
    assert.deepEqual(
      parsed.scenarios.map((s: { name: string }) => s.name),
      ['coalescing'],
    );
    const rows = parsed.scenarios[0].tables[0].rows as { reconciles: number; converged: string }[];
    assert.ok(rows.length > 0);
    for (const row of rows) {
      assert.ok(row.reconciles >= 1, 'every system reconciled the updated object');
      assert.equal(row.converged, 'yes');
    }
    assert.ok(existsSync(join(docs, 'performance.md')));
    assert.match(readFileSync(join(docs, 'performance.md'), 'utf8'), /## Coalescing/);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('a bench run refuses to start over the results file of a run started the same second', () => {
  const dir = mkdtempSync(join(tmpdir(), 'bench-taken-'));
  try {
    // Every name the run could pick in the next minute is taken by another run's results.
    const from = Date.now();
    const taken = Array.from({ length: 60 }, (_, i) => {
      const stamp = new Date(from + i * 1000).toISOString().slice(0, 19).replace(/:/g, '');
      return `${stamp}Z-quick.json`;
    });
    mkdirSync(dir, { recursive: true });
    for (const name of taken) writeFileSync(join(dir, name), 'another run');
    const run = spawnSync(
      process.execPath,
      [main, '--quick', '--scenario', 'coalescing', '--systems', 'baseline', '--results-dir', dir],
      { encoding: 'utf8', timeout: 60_000, cwd: dir },
    );
    assert.equal(run.status, 2, `bench exited ${run.status}:\n${run.stderr}`);
    assert.match(run.stderr, /exists: another bench run started this second/);
    for (const name of taken) assert.equal(readFileSync(join(dir, name), 'utf8'), 'another run');
    assert.deepEqual(readdirSync(dir).sort(), [...taken].sort());
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
