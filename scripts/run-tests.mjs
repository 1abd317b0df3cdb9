// Runs the compiled test files with node's built-in runner. Arguments narrow the run to paths that
// contain one of them (`npm test -- queue`), so one area can be tested without the whole suite.
import { spawnSync } from 'node:child_process';
import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';

function collect(dir, out) {
  let entries;
  try {
    entries = readdirSync(dir);
  } catch {
    return out;
  }
  for (const entry of entries) {
    // An OUT_DIR build outside the tree links node_modules into it; its packages' tests are not ours.
    if (entry === 'node_modules') continue;
    const path = join(dir, entry);
    if (statSync(path).isDirectory()) collect(path, out);
    else if (entry.endsWith('.test.js')) out.push(path);
  }
  return out;
}

const outDir = process.env.OUT_DIR ?? 'dist';
const filters = process.argv.slice(2);
const files = collect(outDir, [])
  .filter((f) => !f.includes(join(outDir, 'bench')))
  .filter((f) => filters.length === 0 || filters.some((p) => f.includes(p)))
  .sort();
if (files.length === 0) {
  console.error(`no test files match ${filters.join(' ') || '(all)'}`);
  process.exit(1);
}
const concurrency = process.env.TEST_CONCURRENCY ?? '2';
const result = spawnSync(
  process.execPath,
  ['--test', `--test-concurrency=${concurrency}`, '--test-timeout=600000', ...files],
  { stdio: 'inherit' },
);
process.exit(result.status ?? 1);
