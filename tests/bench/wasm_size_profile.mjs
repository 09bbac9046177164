#!/usr/bin/env node
// What each crate costs in the wasm module: twiggy's per-function sizes summed by the crate
// each (demangled) name starts with, printed as a markdown table with the module's raw,
// gzip and brotli sizes. Needs a module that keeps its `name` section:
//   CARGO_PROFILE_WASM_STRIP=none cargo build --lib --target wasm32-unknown-unknown --profile wasm
//   node tests/bench/wasm_size_profile.mjs $CARGO_TARGET_DIR/wasm32-unknown-unknown/wasm/hudi_edge.wasm [rows]
// The sizes of the shipped module are those of the same build stripped (the name section
// is a quarter of it); the table's percentages are of code + data, which stripping keeps.
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { brotliCompressSync, constants, gzipSync } from 'node:zlib';

const [wasmPath, rowsArg] = process.argv.slice(2);
if (!wasmPath) {
  console.error('usage: wasm_size_profile.mjs MODULE.wasm [rows]');
  process.exit(2);
}
const rows = Number(rowsArg ?? 40);
const twiggy = process.env.TWIGGY ?? join(homedir(), '.cargo', 'bin', 'twiggy');
const items = JSON.parse(execFileSync(twiggy, ['top', '-f', 'json', wasmPath], { maxBuffer: 1 << 30 }).toString());

/// The crate a symbol's code belongs to: the first path segment of the type or function it
/// is about (`<parquet::X as core::fmt::Debug>::fmt` is parquet's; `drop_in_place<T>` is T's).
export function crateOf(name) {
  if (/^data\[\d+\]$/.test(name) || name.startsWith('data segment')) return '(data segments: constants, tables, strings)';
  if (/^code\[\d+\]$/.test(name)) return '(unnamed code)';
  if (!name.includes('::')) {
    if (/^(import|export|elem|table|memory|global|type)/.test(name) || /section|subsection/.test(name)) return '(wasm sections, imports, exports)';
    return name.startsWith('__wbg') || name.startsWith('__wbindgen') || name.startsWith('wasm_bindgen') ? 'wasm-bindgen' : '(C / runtime: ' + (/^(ZSTD|HUF|FSE|HIST|ZDICT|COVER|POOL|ERR_)/.test(name) ? 'zstd' : 'other') + ')';
  }
  let n = name.trim();
  for (;;) {
    const drop = n.match(/^core::ptr::drop_in_place<(.*)>$/);
    if (drop) {
      n = drop[1];
      continue;
    }
    const stripped = n.replace(/^(<|&|\*const |\*mut |mut |dyn |\(|\[)+/, '');
    if (stripped === n) break;
    n = stripped;
  }
  // `<T as some_crate::Trait>::f`: a generic blanket impl, the trait's crate.
  const blanket = n.match(/^[A-Z]\w* as (\w+)::/);
  if (blanket) return blanket[1];
  const first = n.split('::')[0].replace(/[<>\s].*$/, '').replace(/\[[0-9a-f]+\]$/, '');
  return first || '(other)';
}

const byCrate = new Map();
let total = 0;
for (const it of items) {
  // Custom sections (names, debug info, wasm-bindgen's) are not in the shipped module.
  if (it.name.startsWith('"function names"') || it.name.includes('custom section') || /^(name|producers|target_features)\b/.test(it.name)) continue;
  const c = crateOf(it.name);
  const e = byCrate.get(c) ?? { bytes: 0, items: 0 };
  e.bytes += it.shallow_size;
  e.items += 1;
  byCrate.set(c, e);
  total += it.shallow_size;
}

const bytes = readFileSync(wasmPath);
const gz = gzipSync(bytes, { level: 9 }).length;
const br = brotliCompressSync(bytes, { params: { [constants.BROTLI_PARAM_QUALITY]: 11, [constants.BROTLI_PARAM_SIZE_HINT]: bytes.length } }).length;
const kib = (n) => `${(n / 1024).toFixed(1)} KiB`;
console.log(`module ${wasmPath}: raw ${bytes.length} B (${kib(bytes.length)}), gzip -9 ${gz} B (${kib(gz)}), brotli 11 ${br} B (${kib(br)})`);
console.log(`code + data counted: ${total} B (${kib(total)})\n`);
console.log('| crate | bytes | share | items |');
console.log('|---|---:|---:|---:|');
const sorted = [...byCrate.entries()].sort((a, b) => b[1].bytes - a[1].bytes);
let rest = { bytes: 0, items: 0, crates: 0 };
sorted.forEach(([c, e], i) => {
  if (i < rows) console.log(`| ${c} | ${e.bytes} | ${((100 * e.bytes) / total).toFixed(1)}% | ${e.items} |`);
  else {
    rest.bytes += e.bytes;
    rest.items += e.items;
    rest.crates += 1;
  }
});
if (rest.crates) console.log(`| (${rest.crates} more crates) | ${rest.bytes} | ${((100 * rest.bytes) / total).toFixed(1)}% | ${rest.items} |`);
