// The apps start from one bundle each, not from the thousands of modules tsc writes: reading,
// resolving and compiling those one by one was most of a process's start-up (docs/performance.md,
// "Start-up"). esbuild bundles the compiled JavaScript (tsc has already emitted the decorator
// metadata NestJS needs, which esbuild cannot) and follows tsc's source maps back to the
// TypeScript. Then each bundle is loaded once and V8's code cache of it written beside it, so that
// a process takes the bytecode of what loading runs instead of compiling it (bundle-loader.ts).
import { execFileSync } from 'node:child_process';
import {
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  renameSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { build } from 'esbuild';
import { bundleFormat, notInstalled } from './bundle-format.mjs';
import { keepOwnSources } from './own-source-map.mjs';

// OUT_DIR lets several builds of one tree live side by side (see copy-assets.mjs).
const outDir = process.env.OUT_DIR ?? 'dist';
const apps = ['watcher', 'worker'];
// apps/<app>/src/main.ts loads it by this name.
const BUNDLE = 'app.cjs';
const self = fileURLToPath(import.meta.url);
const sourceMapTrimmer = fileURLToPath(new URL('own-source-map.mjs', import.meta.url));
const formatFile = fileURLToPath(new URL('bundle-format.mjs', import.meta.url));

/**
 * Marks a package's modules as declarations only, free of side effects, so that the bundle keeps
 * only what the app reaches; `entry` (inside the package) replaces the one esbuild would pick.
 * - @kubernetes/client-node's index re-exports every module it has (watch, exec, port-forward,
 *   the ~2,700 generated models) and its package.json does not say they are free of side
 *   effects, so a bundler keeps them all.
 * - BullMQ's CommonJS build (esbuild's pick for Node) defines every class at load, flows, job
 *   schedulers and sandboxed processors included, which a process here never uses; its ES module
 *   build lets the bundle drop them.
 */
function declarationsOnly(pkg, entry) {
  const inside = `/node_modules/${pkg}/`;
  return {
    name: `${pkg}-declarations-only`,
    setup(b) {
      b.onResolve({ filter: /.*/ }, async (args) => {
        if (args.pluginData === pkg) return undefined;
        if (args.path === pkg && entry) {
          return { path: resolve('node_modules', pkg, entry), sideEffects: false };
        }
        if (!args.importer.includes(inside) && args.path !== pkg) return undefined;
        const result = await b.resolve(args.path, {
          kind: args.kind,
          importer: args.importer,
          resolveDir: args.resolveDir,
          pluginData: pkg,
        });
        if (result.errors.length > 0 || result.external) return result;
        return { ...result, sideEffects: false };
      });
    },
  };
}

/** Whether the bundle in `dir` was made from the files it lists, none changed since. */
function upToDate(dir) {
  try {
    const { inputs } = JSON.parse(readFileSync(join(dir, 'inputs.json'), 'utf8'));
    const built = statSync(join(dir, BUNDLE)).mtimeMs;
    return inputs.every((file) => statSync(file).mtimeMs <= built);
  } catch {
    return false;
  }
}

/**
 * Replaces each file whole (write, then rename): a build during a test run (the doc-test runs
 * `npm run gen:check`) must not let a process that starts meanwhile read half a bundle. The
 * bundle itself comes last, so its time says the set is complete.
 */
function writeAtomically(files) {
  for (const { path, contents } of files) {
    mkdirSync(dirname(path), { recursive: true });
    const temporary = `${path}.${process.pid}.tmp`;
    writeFileSync(temporary, contents);
    renameSync(temporary, path);
  }
}

/**
 * The Lua scripts the bundled libraries load at run time from `./commands/` beside their module
 * (BullMQ's layout: `<verb>-<keys>.lua`). In a bundle every module's URL is the bundle's, so the
 * scripts go to `commands/` beside it; two libraries may not name a script alike.
 */
function luaScriptsOf(inputs) {
  const scripts = new Map();
  const ours = inputs.filter((input) => !input.includes('/node_modules/'));
  for (const dir of new Set(ours.map((input) => join(dirname(input), 'commands')))) {
    if (!existsSync(dir)) continue;
    for (const name of readdirSync(dir).filter((n) => n.endsWith('.lua'))) {
      const path = join(dir, name);
      const other = scripts.get(name);
      if (other && other !== path)
        throw new Error(`two Lua scripts named ${name}: ${other}, ${path}`);
      scripts.set(name, path);
    }
  }
  return scripts;
}

const rebuilt = [];
for (const app of apps) {
  const dir = join(outDir, 'apps', app, 'bundle');
  if (upToDate(dir)) continue;
  const result = await build({
    entryPoints: [join(outDir, 'apps', app, 'src', 'app.js')],
    outfile: join(dir, BUNDLE),
    bundle: true,
    write: false,
    metafile: true,
    ...bundleFormat,
    platform: 'node',
    target: 'node22',
    // Trimmed to the project's own sources below (own-source-map.mjs says why).
    sourcemap: 'linked',
    // Stack traces need positions and names, not the sources' text.
    sourcesContent: false,
    // A third less to read and parse at every start; names stay (NestJS names modules and
    // providers after their classes), and the map leads back to the sources.
    minifyWhitespace: true,
    minifySyntax: true,
    keepNames: true,
    // The packages' licence comments go to app.cjs.LEGAL.txt beside the bundle.
    legalComments: 'external',
    external: notInstalled,
    plugins: [
      declarationsOnly('@kubernetes/client-node'),
      declarationsOnly('bullmq', 'dist/esm/index.js'),
    ],
    logLevel: 'warning',
    // Bull Board finds its UI's files with require.resolve, at run time, in node_modules.
    logOverride: { 'require-resolve-not-external': 'silent', 'direct-eval': 'silent' },
  });
  // One character beyond ASCII makes V8 hold the whole source as UTF-16: twice the bytes to
  // decode, keep and scan at every start. esbuild escapes them, except in some regular expressions.
  for (const f of result.outputFiles.filter((o) => o.path.endsWith(BUNDLE))) {
    const at = f.contents.findIndex((byte) => byte > 0x7f);
    if (at >= 0) {
      const line = f.contents.subarray(0, at).filter((byte) => byte === 0x0a).length + 1;
      throw new Error(
        `${relative('.', f.path)}:${line}: a character beyond ASCII; write it as an escape`,
      );
    }
  }
  const modules = Object.keys(result.metafile.inputs).map((input) => resolve(input));
  const scripts = luaScriptsOf(modules);
  const inputs = [self, sourceMapTrimmer, formatFile, ...modules, ...scripts.values()];
  const files = [
    ...[...scripts].map(([name, path]) => ({
      path: resolve(dir, 'commands', name),
      contents: readFileSync(path),
    })),
    ...result.outputFiles.map((f) => ({
      path: f.path,
      contents: f.path.endsWith('.map')
        ? JSON.stringify(keepOwnSources(JSON.parse(f.text)))
        : f.contents,
    })),
  ];
  files.sort((a, b) => Number(a.path.endsWith(BUNDLE)) - Number(b.path.endsWith(BUNDLE)));
  writeAtomically([
    { path: resolve(dir, 'inputs.json'), contents: `${JSON.stringify({ inputs }, null, 2)}\n` },
    ...files,
  ]);
  rebuilt.push(app);
  console.log(`bundled ${relative('.', join(dir, BUNDLE))}`);
}

// The code caches come from a training run of the apps (tools/code-cache/main.ts), in processes of
// their own, as the apps run. It gets none of the caller's environment but PATH (where it finds
// redis-server) and TMPDIR: V8 refuses a cache made under other V8 flags, so NODE_OPTIONS stays
// out, and the apps read their configuration (REDIS_*, QUEUE_*, …) from the environment. A cache
// older than the code that makes it is made anew.
const loaderFile = resolve(outDir, 'libs', 'runtime', 'src', 'bundle-loader.js');
const trainingDir = resolve(outDir, 'tools', 'code-cache');
const makers = [loaderFile, join(trainingDir, 'main.js'), join(trainingDir, 'train-app.js')];
const { codeCacheOf } = await import(pathToFileURL(loaderFile).href);
const current = (cache) =>
  existsSync(cache) && makers.every((file) => statSync(cache).mtimeMs >= statSync(file).mtimeMs);
const stale = apps.filter(
  (app) =>
    rebuilt.includes(app) || !current(codeCacheOf(resolve(outDir, 'apps', app, 'bundle', BUNDLE))),
);
if (stale.length > 0) {
  const { PATH, TMPDIR } = process.env;
  execFileSync(process.execPath, [makers[1]], {
    env: { PATH, ...(TMPDIR ? { TMPDIR } : {}) },
    stdio: 'inherit',
  });
}
