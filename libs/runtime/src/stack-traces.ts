import { readFileSync } from 'node:fs';
import { SourceMap } from 'node:module';
import { fileURLToPath } from 'node:url';

/**
 * Makes stack frames in a bundle name the TypeScript source, line and column they came from,
 * through the bundle's source map (`<bundle>.map`). Node's own source map support
 * (--enable-source-maps) reads and parses a map when its file loads, which for an app's bundle is
 * a third of a second of every start; here the map is read the first time a stack is formatted,
 * and never when none is. Frames outside the bundle, and frames the map does not cover, stay as
 * V8 writes them.
 */
export function mapStackTraces(bundle: URL): void {
  const bundleUrl = bundle.href;
  let map: SourceMap | null | undefined;
  const sourceMap = (): SourceMap | null => {
    if (map === undefined) {
      try {
        map = new SourceMap(JSON.parse(readFileSync(new URL(`${bundleUrl}.map`), 'utf8')));
      } catch {
        // No map beside the bundle: frames keep the bundle's own positions.
        map = null;
      }
    }
    return map;
  };
  const sources = new Map<string, string>();
  const sourcePath = (source: string): string => {
    let path = sources.get(source);
    if (path === undefined) {
      path = fileURLToPath(new URL(source, bundleUrl));
      sources.set(source, path);
    }
    return path;
  };

  const mapFrame = (frame: NodeJS.CallSite): string => {
    const text = frame.toString();
    const line = frame.getLineNumber();
    const column = frame.getColumnNumber();
    if (frame.getFileName() !== bundleUrl || line === null || column === null) return text;
    const entry = sourceMap()?.findEntry(line - 1, column - 1);
    if (!entry || !('originalSource' in entry)) return text;
    const original = `${sourcePath(entry.originalSource)}:${entry.originalLine + 1}:${entry.originalColumn + 1}`;
    return text.replace(`${bundleUrl}:${line}:${column}`, original);
  };

  Error.prepareStackTrace = (error: Error, frames: NodeJS.CallSite[]) =>
    // The header V8 writes: "name: message", or the one of the two that is not empty.
    Error.prototype.toString.call(error) +
    frames.map((frame) => `\n    at ${mapFrame(frame)}`).join('');
}
