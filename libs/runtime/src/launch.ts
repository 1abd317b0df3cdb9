import { fileURLToPath } from 'node:url';
import { loadBundle } from './bundle-loader.js';
import { mapBundleFrames } from './stack-traces.js';

/**
 * Starts an app from its bundle: one file to read instead of thousands of modules, the bytecode
 * of what its loading runs taken from the code cache the build made, and stack traces that name
 * the TypeScript sources through the bundle's source map.
 */
export async function launch(bundle: URL): Promise<void> {
  const file = fileURLToPath(bundle);
  mapBundleFrames(file);
  try {
    await loadBundle(file).app.start();
  } catch (err) {
    // A failure before the app handles its own (bootstrap.ts). Left uncaught, Node would print
    // the bundle's line of the throw above the stack: a minified line, kilobytes long. The stack
    // alone names each frame's source. Writes to stderr are synchronous on Linux, so none is lost.
    console.error(err);
    process.exit(1);
  }
}
