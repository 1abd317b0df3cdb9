import { readFileSync } from 'node:fs';
import { SourceMap } from 'node:module';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * Makes stack traces name the TypeScript source of every frame in a bundle. Node applies source
 * maps to what its module loaders load, not to a script run through node:vm, which is how a bundle
 * runs (bundle-loader.ts); so its frames are mapped here. The map is read and decoded when a stack
 * is first formatted, each frame of the bundle that the map covers gets its source position (the
 * build keeps only the project's own mappings, scripts/own-source-map.mjs), and every other frame
 * stays as V8 wrote it.
 */
export function mapBundleFrames(bundle: string, mapFile = `${bundle}.map`): void {
  let map: SourceMap | null | undefined;
  const sourceMap = (): SourceMap | null => {
    if (map === undefined) {
      try {
        map = new SourceMap(JSON.parse(readFileSync(mapFile, 'utf8')) as never);
      } catch {
        // Without its map a stack still names the bundle's own positions.
        map = null;
      }
    }
    return map;
  };
  const sourcePath = (source: string): string =>
    source.startsWith('file:') ? fileURLToPath(source) : resolve(dirname(mapFile), source);

  const frame = (site: NodeJS.CallSite): string => {
    const text = site.toString();
    const line = site.getLineNumber();
    const column = site.getColumnNumber();
    if (site.getFileName() !== bundle || line === null || column === null) return text;
    const entry = sourceMap()?.findEntry(line - 1, column - 1);
    if (!entry || !('originalSource' in entry)) return text;
    const original = `${sourcePath(entry.originalSource)}:${entry.originalLine + 1}:${entry.originalColumn + 1}`;
    return text.replace(`${bundle}:${line}:${column}`, original);
  };

  Error.prepareStackTrace = (error: Error, sites: NodeJS.CallSite[]): string =>
    headerOf(error) + sites.map((site) => `\n    at ${frame(site)}`).join('');
}

/** The first line of a stack, as Node writes it. */
export function headerOf(error: Error): string {
  let header: string;
  try {
    header = Error.prototype.toString.call(error);
  } catch {
    return '<error>';
  }
  // Node names the code of its own errors after their name: `RangeError [ERR_OUT_OF_RANGE]: …`.
  const { code, name } = error as { code?: unknown; name?: unknown };
  if (typeof code !== 'string' || !/^ERR_[A-Z0-9_]+$/.test(code) || typeof name !== 'string') {
    return header;
  }
  return header.startsWith(name) && !name.endsWith(']')
    ? `${name} [${code}]${header.slice(name.length)}`
    : header;
}
