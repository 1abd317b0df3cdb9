import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { generatedFiles, type GeneratedFile } from './outputs.js';

/** Names every generated file whose content on disk differs from what the sources render now. */
export function staleFiles(root: string, files: GeneratedFile[] = generatedFiles()): string[] {
  return files
    .filter((f) => {
      try {
        return readFileSync(resolve(root, f.path), 'utf8') !== f.content;
      } catch {
        return true;
      }
    })
    .map((f) => f.path);
}

function main(): void {
  const root = process.cwd();
  const check = process.argv.includes('--check');
  if (check) {
    const stale = staleFiles(root);
    if (stale.length > 0) {
      for (const path of stale) console.error(`stale generated file: ${path}`);
      console.error('run `npm run gen` and commit the result');
      process.exit(1);
    }
    console.log('generated files are up to date');
    return;
  }
  for (const f of generatedFiles()) {
    mkdirSync(dirname(resolve(root, f.path)), { recursive: true });
    writeFileSync(resolve(root, f.path), f.content);
    console.log(`wrote ${f.path}`);
  }
}

if (import.meta.url === `file://${process.argv[1]}`) main();
