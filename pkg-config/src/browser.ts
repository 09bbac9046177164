// Browsers, web workers and bundlers: the module is fetched from next to this file when the
// first table is opened. Vite, webpack 5 and Rollup see the `new URL(…, import.meta.url)` and
// emit the .wasm as an asset; esbuild does not (copy the .wasm beside the bundle, or call
// `initWasm(url)`).
import { setWasmProvider } from './wasm-loader.js';

setWasmProvider(() => new URL('./wasm/hudi_edge_bg.wasm', import.meta.url));

export * from './index.js';
