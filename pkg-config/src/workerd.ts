// Cloudflare Workers / workerd: the runtime compiles imported .wasm modules at deploy time and
// forbids compiling code at run time, so the module is imported, not fetched.
import wasm from './wasm/hudi_edge_bg.wasm';
import { setWasmProvider } from './wasm-loader.js';

setWasmProvider(() => wasm);

export * from './index.js';
