// Node ≥ 20: the modules are read from the package directory, the read module's compile
// starting at import, the full one on the first write; local paths and `file://` URLs open
// through `node:fs`.
import { open } from 'node:fs/promises';
import { prepareWasm, setWasmSources } from './wasm-loader.js';
import { setLocalStorageFactory } from './local-tables.js';
import { fsStorage } from './fs-storage.js';
import { readPages, type Resizable } from './pages-buffer.js';

/** A module compiled from its file (8-12 MB). Its bytes are read into a resizable buffer and
 *  given back as soon as compile has taken its copy: a plain buffer stayed resident until a
 *  later full GC (in a whole-table read(), its whole length on the peak), and its size as
 *  external memory set off a GC of its own during a cold open. */
async function compiled(url: URL): Promise<WebAssembly.Module> {
  const file = await open(url);
  let bytes: Uint8Array<ArrayBuffer>;
  try {
    bytes = await readPages(file, 0, (await file.stat()).size);
  } finally {
    await file.close();
  }
  // WebAssembly.compile copies the bytes before it returns.
  const module = WebAssembly.compile(bytes);
  (bytes.buffer as Resizable).resize(0);
  return module;
}

setWasmSources({
  read: () => compiled(new URL('./wasm/hudi_edge_read_bg.wasm', import.meta.url)),
  full: () => compiled(new URL('./wasm/hudi_edge_bg.wasm', import.meta.url)),
  sync: true,
});
prepareWasm();
setLocalStorageFactory((where) => fsStorage(where));

export * from './index.js';
