// Cloudflare Workers / workerd: the runtime compiles imported .wasm modules at deploy time and
// forbids compiling code at run time, so the module is imported, not fetched. One module, the
// full one, serves reads and writes: nothing is downloaded at run time, and one module keeps
// the worker within the platform's size limits.
import wasm from './wasm/hudi_edge_bg.wasm';
import { setWasmSources } from './wasm-loader.js';

setWasmSources({ full: () => wasm });

export * from './index.js';
