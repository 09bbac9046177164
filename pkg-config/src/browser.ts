// Browsers, web workers and bundlers: the modules are fetched from next to this file, the read
// module's compile starting at import (compileStreaming, so the browser can cache the compiled
// code) and the full one on the first write. Vite, webpack 5 and Rollup see the
// `new URL(…, import.meta.url)` and emit the .wasm files as assets; esbuild does not (copy
// the .wasm files beside the bundle, or call `initWasm(url, writeUrl)`).
import { prepareWasm, setWasmSources } from './wasm-loader.js';

setWasmSources({
  read: () => new URL('./wasm/hudi_edge_read_bg.wasm', import.meta.url),
  full: () => new URL('./wasm/hudi_edge_bg.wasm', import.meta.url),
});
prepareWasm();

export * from './index.js';
