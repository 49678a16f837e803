/**
 * The web console's build (issue 21): Vite with Preact's automatic JSX runtime through Vite's own oxc transform (no
 * Babel), one HTML entry, output in `dist/console/` (served by `rest/console.ts` under `/console/`). No inline script
 * (the module-preload polyfill is off; the CSP forbids inline scripts), no asset inlined as a data URL into scripts.
 * `bin/build.js` runs it; the tests build into a temporary directory with `outDir` overridden.
 */
import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vite';

export default defineConfig({
  root: fileURLToPath(new URL('.', import.meta.url)),
  base: '/console/',
  publicDir: false,
  logLevel: 'warn',
  oxc: { jsx: { runtime: 'automatic', importSource: 'preact' } },
  build: {
    outDir: fileURLToPath(new URL('../dist/console', import.meta.url)),
    emptyOutDir: true,
    manifest: true,
    target: 'es2022',
    modulePreload: { polyfill: false },
    assetsInlineLimit: 0,
    sourcemap: false,
    reportCompressedSize: false,
  },
});
