// Node ≥ 20: the module is read from the package directory when the first table is opened.
import { readFile } from 'node:fs/promises';
import { setWasmProvider } from './wasm-loader.js';

setWasmProvider(() => readFile(new URL('./wasm/hudi_edge_bg.wasm', import.meta.url)));

export * from './index.js';
