// Reads a table snapshot with the wasm build in Node and prints one JSON line:
// {seconds, peak_rss_mb, ...}. Usage: node read_wasm.mjs TABLE_DIR [optionsJson]
// STREAM=1 reads batch by batch with `stream()` (rows counted with apache-arrow from
// pkg-config's dependencies) instead of one Arrow table (the package's `read()`).
// WASM_BYTES=plain loads the module as wasm-bindgen's glue does (a buffer its size), not as the
// package's Node entry does (pkg-config/src/node.ts). PKG=1 reads through the npm package
// instead (`HudiTable.open(dir).read(options)` from $HUDI_EDGE_PKG_DIST, default pkg-config/dist: the
// read module, as an app's read loads it).
import fs from 'node:fs';
import { createRequire } from 'node:module';
import { join, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { writeFileSync } from 'node:fs';
import { fsStorage } from '../js/fs_storage.mjs';

const repo = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const require = createRequire(import.meta.url);
const glue = join(process.env.HUDI_EDGE_WASM_NODE ?? join(repo, 'target', 'wasm-node'), 'hudi_edge.js');
// The glue reads the module with readFileSync; the package reads it into a buffer past glibc's
// 32 MiB dynamic mmap threshold, so freeing it leaves malloc's trim threshold alone.
const readFileSync = fs.readFileSync;
if (process.env.WASM_BYTES !== 'plain') {
  fs.readFileSync = (path, ...rest) => {
    if (!String(path).endsWith('.wasm')) return readFileSync(path, ...rest);
    const size = fs.statSync(path).size;
    const buf = new Uint8Array(Math.max(size, 33 << 20));
    const fd = fs.openSync(path, 'r');
    try {
      for (let n = 0, got = 1; got > 0 && n < size; n += got) got = fs.readSync(fd, buf, n, size - n, n);
    } finally {
      fs.closeSync(fd);
    }
    return buf.subarray(0, size);
  };
}
/** Samples the process's RSS every 20 ms; the returned function stops and answers the peak. */
function rssPeak() {
  let peak = 0;
  const sample = setInterval(() => (peak = Math.max(peak, process.memoryUsage().rss)), 20);
  return () => {
    clearInterval(sample);
    return Math.max(peak, process.memoryUsage().rss);
  };
}
const mb = (n) => (n === undefined ? undefined : Math.round(n / 1e6));

if (process.env.PKG === '1') {
  const dist = process.env.HUDI_EDGE_PKG_DIST ?? join(repo, 'pkg-config', 'dist');
  const [table, optionsJson = '{}'] = process.argv.slice(2);
  // apache-arrow's ESM build, the one the package's tables come from.
  const { tableToIPC } = await import(join(repo, 'pkg-config', 'node_modules', 'apache-arrow', 'Arrow.node.mjs'));
  const stopSampling = rssPeak();
  const t0 = performance.now();
  const { HudiTable, wasmMemoryBytes } = await import(join(dist, 'node.js'));
  const t = await HudiTable.open(table);
  const openRss = process.memoryUsage().rss;
  const openWasm = wasmMemoryBytes();
  const result = await t.read(JSON.parse(optionsJson));
  const seconds = (performance.now() - t0) / 1000;
  const peak = stopSampling();
  // The result's size as Arrow IPC (what the ratio is taken against), once the peak is taken.
  const ipc = tableToIPC(result, 'stream');
  const ipcBytes = ipc.length;
  // The Arrow IPC stream goes to a file so the caller can count rows (untimed).
  if (process.env.IPC_OUT) writeFileSync(process.env.IPC_OUT, ipc);
  console.log(JSON.stringify({ rows: result.numRows, ipc_bytes: ipcBytes, seconds, peak_rss_mb: mb(peak), open_rss_mb: mb(openRss), open_wasm_memory_mb: mb(openWasm), wasm_memory_mb: mb(wasmMemoryBytes()), ratio: +(peak / ipcBytes).toFixed(3) }));
  process.exit(0);
}
const bindings = require(glue);
fs.readFileSync = readFileSync;
const { WasmTable } = bindings;
const [table, optionsJson = '{}'] = process.argv.slice(2);
const options = JSON.parse(optionsJson);

const stopSampling = rssPeak();
const t0 = performance.now();
const t = await WasmTable.openJs(fsStorage(table));
// What the process holds before any row: Node, apache-arrow, the compiled module, the open table.
const { tableFromIPC } = createRequire(join(repo, 'pkg-config', 'package.json'))('apache-arrow');
const openRss = process.memoryUsage().rss;
let rows, ipc, result;
if (process.env.STREAM === '1') {
  const stream = t.stream(options);
  rows = 0;
  for (let chunk; (chunk = await stream.next()); ) rows += tableFromIPC(chunk).numRows;
} else {
  // What the package's read() does: the IPC pieces (each batch leaves wasm memory as it is
  // read) made into one apache-arrow Table, held until the peak is taken.
  ipc = await t.readArrowPieces(options);
  result = tableFromIPC(ipc);
  rows = result.numRows;
}
const seconds = (performance.now() - t0) / 1000;
const peak = stopSampling();
// The Arrow IPC stream goes to a file so the caller can count rows (untimed).
const ipcBytes = ipc?.reduce((n, p) => n + p.length, 0);
if (ipc && process.env.IPC_OUT) writeFileSync(process.env.IPC_OUT, Buffer.concat(ipc));
// wasm memory never shrinks: its size now is the engine's high-water mark.
const wasmMemory = bindings.memoryBytes();
console.log(
  JSON.stringify({
    rows,
    ipc_bytes: ipcBytes,
    seconds,
    peak_rss_mb: mb(peak),
    open_rss_mb: mb(openRss),
    wasm_memory_mb: mb(wasmMemory),
  }),
);
