// tsc emits only JavaScript; the runtime also needs the non-TypeScript files that sit beside the
// sources (Lua scripts loaded by the queue, shell scripts, YAML fixtures), at the same relative place.
import {
  cpSync,
  existsSync,
  readdirSync,
  readFileSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
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

// The compiled files import each other by the names of package.json "imports" (#queue, ...), which
// Node resolves from the nearest package.json. One in the output folder maps each name to the
// compiled file beside it, so a build runs wherever OUT_DIR puts it.
const { imports } = JSON.parse(readFileSync('package.json', 'utf8'));
const compiled = {};
for (const [name, target] of Object.entries(imports)) {
  if (!target.default.startsWith('./dist/'))
    throw new Error(`package.json imports ${name}: "default" must point into ./dist/`);
  compiled[name] = `./${target.default.slice('./dist/'.length)}`;
}
const manifest = `${JSON.stringify({ type: 'module', imports: compiled }, null, 2)}\n`;
const manifestPath = join(outDir, 'package.json');
if (!existsSync(manifestPath) || readFileSync(manifestPath, 'utf8') !== manifest)
  writeFileSync(manifestPath, manifest);

// An output folder outside the repository cannot resolve packages by walking up to node_modules.
const linked = join(outDir, 'node_modules');
if (!resolve(outDir).startsWith(resolve('.')) && !existsSync(linked)) {
  symlinkSync(resolve('node_modules'), linked, 'dir');
}
