import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vite';

/** The web console: Preact with JSX through Vite's own transform (oxc), built to dist/console. */
export default defineConfig({
  root: fileURLToPath(new URL('.', import.meta.url)),
  base: '/',
  publicDir: false,
  logLevel: 'warn',
  oxc: { jsx: { runtime: 'automatic', importSource: 'preact' } },
  build: {
    outDir: fileURLToPath(new URL('../dist/console', import.meta.url)),
    emptyOutDir: true,
    // No inline script or style (the page's CSP forbids them) and nothing fetched from elsewhere.
    assetsInlineLimit: 0,
    modulePreload: { polyfill: false },
    target: 'es2022',
    sourcemap: false,
  },
});
