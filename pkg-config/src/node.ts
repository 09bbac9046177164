// Node ≥ 20: the modules are read from the package directory, the read module's compile
// starting at import, the full one on the first write; local paths and `file://` URLs open
// through `node:fs`.
import { readFile } from 'node:fs/promises';
import { prepareWasm, setWasmSources } from './wasm-loader.js';
import { setLocalStorageFactory } from './local-tables.js';
import { fsStorage } from './fs-storage.js';

setWasmSources({
  read: () => readFile(new URL('./wasm/hudi_edge_read_bg.wasm', import.meta.url)),
  full: () => readFile(new URL('./wasm/hudi_edge_bg.wasm', import.meta.url)),
});
prepareWasm();
setLocalStorageFactory((where) => fsStorage(where));

export * from './index.js';
