import { enableCompileCache } from 'node:module';
import { fileURLToPath } from 'node:url';

/** What an app's bundle exports (apps/<app>/src/app.ts, bundled by `npm run build`). */
interface AppBundle {
  start(): Promise<void>;
}

/**
 * Where Node keeps the compiled code of the bundles between starts: `.compile-cache` in the
 * build's output folder. `npm run build` fills it, so a read-only copy of the build (the image)
 * starts warm too.
 */
export const COMPILE_CACHE_DIR = fileURLToPath(new URL('../../../.compile-cache', import.meta.url));

/**
 * Starts an app from its bundle: one file to read and compile instead of thousands of modules,
 * its compiled code taken from the compile cache, and stack traces that name the TypeScript
 * sources through the bundle's source map. Both have to be switched on before the bundle loads.
 */
export async function launch(bundle: URL): Promise<void> {
  // A cache that cannot be opened (a read-only folder made for another user) only makes the
  // start slower: Node then compiles as it would without one.
  enableCompileCache(COMPILE_CACHE_DIR);
  // Node reads the map when the bundle loads and decodes it, on this thread, when a stack is first
  // formatted: the build keeps the map small for that (scripts/own-source-map.mjs).
  process.setSourceMapsEnabled(true);
  const app = (await import(bundle.href)) as AppBundle;
  await app.start();
}
