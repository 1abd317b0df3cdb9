import { loadBundle } from '#runtime/bundle-loader';

/**
 * One app of a training run (main.ts): started from its bundle as `launch` starts it, it writes
 * the bundle's code cache on SIGUSR2, with every function it has compiled by then, and exits.
 */
const bundle = process.argv[2];
if (!bundle) throw new Error('usage: train-app.js <bundle>');
const { app, writeCodeCache } = loadBundle(bundle);
process.once('SIGUSR2', () => {
  writeCodeCache();
  process.exit(0);
});
await app.start();
