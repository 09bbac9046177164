// Node ≥ 20: the modules are read from the package directory, the read module's compile
// starting at import, the full one on the first write; local paths and `file://` URLs open
// through `node:fs`.
import { open } from 'node:fs/promises';
import { prepareWasm, setWasmSources } from './wasm-loader.js';
import { setLocalStorageFactory } from './local-tables.js';
import { fsStorage } from './fs-storage.js';

/** glibc's malloc raises its mmap threshold to the size of a freed mmapped block up to 32 MiB,
 *  and its trim threshold to twice that. */
const MALLOC_DYNAMIC_MAX = 32 << 20;

/** A module's bytes, read into a buffer past that ceiling: one just their size (8-12 MB), freed
 *  once compiled, would let each malloc arena keep ~24 MB of freed memory instead of returning
 *  it (+25 MB peak RSS in a whole-table read() on Linux). The pages past the bytes are never
 *  written, so never resident. */
async function wasmBytes(url: URL): Promise<Uint8Array> {
  const file = await open(url);
  try {
    const { size } = await file.stat();
    const buf = new Uint8Array(Math.max(size, MALLOC_DYNAMIC_MAX + (1 << 20)));
    let n = 0;
    for (let got = 1; got > 0 && n < size; n += got) got = (await file.read(buf, n, size - n, n)).bytesRead;
    return buf.subarray(0, n);
  } finally {
    await file.close();
  }
}

setWasmSources({
  read: () => wasmBytes(new URL('./wasm/hudi_edge_read_bg.wasm', import.meta.url)),
  full: () => wasmBytes(new URL('./wasm/hudi_edge_bg.wasm', import.meta.url)),
  sync: true,
});
prepareWasm();
setLocalStorageFactory((where) => fsStorage(where));

export * from './index.js';
