import { fileURLToPath } from 'node:url';
import { defineConfig, type Plugin } from 'vite';

const src = fileURLToPath(new URL('./src/', import.meta.url));
const pkg = fileURLToPath(new URL('../pkg-config/dist/index.js', import.meta.url));

/** `apache-arrow` in the viewer's own code resolves as the package resolves it: the package is
 *  linked from ../pkg-config, whose node_modules would otherwise bring a second copy. DuckDB's
 *  own apache-arrow (the SQL card's chunk) is left as it is. */
const oneArrow: Plugin = {
  name: 'one-apache-arrow',
  enforce: 'pre',
  resolveId(source, importer) {
    if (source === 'apache-arrow' && importer?.startsWith(src)) return this.resolve(source, pkg, { skipSelf: true });
    return null;
  },
};

/** The read module starts downloading with the page (`<link rel=preload>`), not once the JS
 *  that asks for it has arrived and run: the package's `fetch` of it (CORS mode, same-origin
 *  credentials, as `crossorigin` preloads) then takes the preloaded response. */
const preloadReadModule: Plugin = {
  name: 'preload-read-module',
  apply: 'build',
  transformIndexHtml: {
    order: 'post',
    handler(_html, ctx) {
      const module = Object.values(ctx.bundle ?? {}).find((o) => o.type === 'asset' && /(^|\/)hudi_edge_read_bg-[^/]*\.wasm$/.test(o.fileName));
      if (!module) throw new Error('preload-read-module: the read module is not among the build outputs');
      return [{ tag: 'link', attrs: { rel: 'preload', href: `./${module.fileName}`, as: 'fetch', type: 'application/wasm', crossorigin: '' }, injectTo: 'head-prepend' }];
    },
  },
};

export default defineConfig({
  // Relative URLs: dist/ works from any folder of any static host.
  base: './',
  // The manifest tells scripts/sizes.mjs which files load first and which only with the SQL card.
  build: { target: 'es2022', outDir: 'dist', emptyOutDir: true, chunkSizeWarningLimit: 2000, manifest: true, modulePreload: false },
  // The package finds its .wasm next to itself (new URL(…, import.meta.url)); pre-bundling
  // for the dev server would move it away.
  optimizeDeps: { exclude: ['hudi-edge'] },
  plugins: [oneArrow, preloadReadModule],
  server: { fs: { allow: ['..'] } },
});
