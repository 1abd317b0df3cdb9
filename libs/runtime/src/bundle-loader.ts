import { readFileSync, renameSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname } from 'node:path';
import { Script } from 'node:vm';
import { crc32 } from 'node:zlib';

/** What an app's bundle exports (apps/<app>/src/app.ts, bundled by `npm run build`). */
export interface AppBundle {
  start(): Promise<void>;
}

/**
 * Where a bundle's code cache lives: beside it. Its first four bytes are the CRC-32 of the bundle
 * it was made from, the rest is V8's. V8 checks its own version and flags but, of the source, only
 * the length; the checksum keeps a cache from being used for another bundle of the same length.
 */
export const codeCacheOf = (bundle: string): string => `${bundle}.cache`;

const HEADER_BYTES = 4;

interface Evaluated {
  readonly exports: AppBundle;
  readonly script: Script;
  /** Whether V8 took the code cache it was given (false when none was given). */
  readonly cacheUsed: boolean;
}

/**
 * Runs a bundle `npm run build` made: a script whose value is a CommonJS module function (Node's
 * module wrapper, written into the bundle by the build so that its source map needs no offset).
 */
function evaluate(file: string, source: Buffer, cachedData: Buffer | undefined): Evaluated {
  // The build keeps bundles ASCII, so Latin-1 decodes them exactly, and V8 keeps one byte a char.
  // An `import()` left in the bundle is refused (Node resolves one from a node:vm script only with
  // an experimental option): each is a package no app here installs or needs, which NestJS and
  // BullMQ try and do without.
  const script = new Script(source.toString('latin1'), { filename: file, cachedData });
  const moduleFunction = script.runInThisContext() as (...args: unknown[]) => void;
  const module = { exports: {} as AppBundle };
  moduleFunction(module.exports, createRequire(file), module, file, dirname(file));
  return {
    exports: module.exports,
    script,
    cacheUsed: cachedData !== undefined && !script.cachedDataRejected,
  };
}

/** The bundle's code cache, when there is one made from this very bundle. */
function readCodeCache(file: string, source: Buffer): Buffer | undefined {
  // Node's own switch for its compile cache turns this one off too.
  if (process.env.NODE_DISABLE_COMPILE_CACHE) return undefined;
  let cache: Buffer;
  try {
    cache = readFileSync(codeCacheOf(file));
  } catch {
    return undefined;
  }
  if (cache.length <= HEADER_BYTES || cache.readUInt32LE(0) !== crc32(source)) return undefined;
  return cache.subarray(HEADER_BYTES);
}

/**
 * Loads an app's bundle with the code cache made at build time, when it fits: V8 then takes
 * the bytecode of every function the cache holds instead of compiling them, which Node's compile
 * cache cannot give (it keeps only what was compiled before anything ran). Without a cache, or
 * with one V8 refuses (another Node, other V8 flags), the bundle is compiled as usual.
 * `writeCodeCache` replaces the cache with one of every function this process has compiled so
 * far: the build calls it in an app it has started and let run (tools/code-cache).
 */
export function loadBundle(file: string): {
  readonly app: AppBundle;
  readonly codeCacheUsed: boolean;
  writeCodeCache(): void;
} {
  const source = readFileSync(file);
  const { exports, script, cacheUsed } = evaluate(file, source, readCodeCache(file, source));
  return {
    app: exports,
    codeCacheUsed: cacheUsed,
    writeCodeCache: () => writeCache(file, source, script),
  };
}

/**
 * Loads the bundle once, without starting its app, and writes its code cache: taken after the
 * bundle ran, it holds every function its loading compiled. The build's fallback when it cannot
 * start the apps to train the cache on (tools/code-cache).
 */
export function writeCodeCache(file: string): void {
  const source = readFileSync(file);
  writeCache(file, source, evaluate(file, source, undefined).script);
}

function writeCache(file: string, source: Buffer, script: Script): void {
  const header = Buffer.alloc(HEADER_BYTES);
  header.writeUInt32LE(crc32(source));
  // Whole or not at all: a process starting meanwhile reads the old cache or the new one.
  const temporary = `${codeCacheOf(file)}.${process.pid}.tmp`;
  writeFileSync(temporary, Buffer.concat([header, script.createCachedData()]));
  renameSync(temporary, codeCacheOf(file));
}
