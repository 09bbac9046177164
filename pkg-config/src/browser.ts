// Browsers, web workers and bundlers (Vite, webpack, esbuild, Rollup): the module is fetched
// from next to this file when the first table is opened; bundlers see the `new URL(…,
// import.meta.url)` and emit the .wasm as an asset.
import { setWasmProvider } from './wasm-loader.js';

setWasmProvider(() => new URL('./wasm/hudi_edge_bg.wasm', import.meta.url));

export * from './index.js';
