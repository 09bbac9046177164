import { defineConfig } from 'vite';

export default defineConfig({
  // Relative URLs: dist/ works from any folder of any static host.
  base: './',
  build: { target: 'es2022', outDir: 'dist', emptyOutDir: true, chunkSizeWarningLimit: 2000 },
  // The package finds its .wasm next to itself (new URL(…, import.meta.url)); pre-bundling
  // for the dev server would move it away.
  optimizeDeps: { exclude: ['hudi-edge'] },
  server: { fs: { allow: ['..'] } },
});
