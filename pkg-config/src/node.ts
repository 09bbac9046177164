// Node ≥ 20: the module is read from the package directory when the first table is opened;
// local paths and `file://` URLs open through `node:fs`.
import { readFile } from 'node:fs/promises';
import { setWasmProvider } from './wasm-loader.js';
import { setLocalStorageFactory } from './local-tables.js';
import { fsStorage } from './fs-storage.js';

setWasmProvider(() => readFile(new URL('./wasm/hudi_edge_bg.wasm', import.meta.url)));
setLocalStorageFactory((where) => fsStorage(where));

export * from './index.js';
