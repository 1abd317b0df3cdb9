// tsc emits only JavaScript; the runtime also needs the non-TypeScript files that sit beside the
// sources (Lua scripts loaded by the queue, shell scripts, YAML fixtures), at the same relative place.
import { cpSync, existsSync, readdirSync, readFileSync, statSync, symlinkSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';

// OUT_DIR lets several builds of one tree live side by side (the same variable run-tests reads).
const outDir = process.env.OUT_DIR ?? 'dist';

const roots = ['apps', 'libs', 'test', 'bench', 'tools'];
const assetExtensions = ['.lua', '.sh', '.yaml', '.yml', '.json', '.sql'];

function walk(dir) {
  let entries;
  try {
    entries = readdirSync(dir);
  } catch {
    return;
  }
  for (const entry of entries) {
    if (entry === 'node_modules') continue;
    const path = join(dir, entry);
    if (statSync(path).isDirectory()) walk(path);
    else if (assetExtensions.some((ext) => entry.endsWith(ext))) {
      // Unchanged files are left alone: a build during a test run (the doc-test runs
      // `npm run gen:check`) must not truncate a file another test is reading.
      const target = join(outDir, relative('.', path));
      if (!existsSync(target) || !readFileSync(target).equals(readFileSync(path)))
        cpSync(path, target);
    }
  }
}

for (const root of roots) walk(root);

// An output folder outside the repository cannot resolve packages by walking up to node_modules.
const linked = join(outDir, 'node_modules');
if (!resolve(outDir).startsWith(resolve('.')) && !existsSync(linked)) {
  symlinkSync(resolve('node_modules'), linked, 'dir');
}
