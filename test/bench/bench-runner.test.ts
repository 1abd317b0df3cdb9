import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { test } from 'node:test';

const main = fileURLToPath(new URL('../../bench/main.js', import.meta.url));

test('the bench runner runs one quick scenario end to end and writes its results and report', () => {
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
