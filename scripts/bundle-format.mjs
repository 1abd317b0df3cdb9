// How an app's bundle is written (scripts/bundle.mjs; libs/runtime/test/launch.test.ts builds its
// own with it): a CommonJS module inside Node's module wrapper, as a script whose value is that
// wrapper function. V8 can cache the code of a script after it ran, not that of an ES module;
// libs/runtime/src/bundle-loader.ts runs the script and calls the wrapper. Strict, as the ES modules
// inside were (esbuild's own "use strict" comes after the banner, where it is no directive), and
// `import.meta` becomes what the wrapper gives.
export const bundleFormat = {
  format: 'cjs',
  banner: {
    js: [
      '(function (exports, require, module, __filename, __dirname) {',
      "'use strict';",
      "const __bundleUrl = require('node:url').pathToFileURL(__filename).href;",
      "const __bundleResolve = (specifier) => require('node:url').pathToFileURL(require.resolve(specifier)).href;",
    ].join(''),
  },
  footer: { js: '})' },
  define: {
    'import.meta.url': '__bundleUrl',
    'import.meta.dirname': '__dirname',
    'import.meta.resolve': '__bundleResolve',
  },
};

// Packages NestJS loads only for features an app uses (an HTTP server, validation pipes,
// microservices, websockets), and BullMQ for backends other than Redis (PostgreSQL, Valkey
// GLIDE); this project installs none of them, so they stay out, unresolved. Each is loaded inside
// a try that does without it; an `import()` of one is refused in a bundle (bundle-loader.ts).
export const notInstalled = [
  'pg',
  '@valkey/valkey-glide',
  '@nestjs/platform-express',
  'class-validator',
  'class-transformer',
  '@nestjs/microservices',
  '@nestjs/microservices/*',
  '@nestjs/websockets',
  '@nestjs/websockets/*',
];
