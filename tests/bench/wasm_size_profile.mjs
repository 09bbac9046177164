#!/usr/bin/env node
// What each crate costs in the wasm module: twiggy's per-function sizes summed by the crate
// each (demangled) name starts with, printed as a markdown table with the module's raw,
// gzip and brotli sizes. Needs a module that keeps its `name` section:
//   CARGO_PROFILE_WASM_STRIP=none cargo build --lib --target wasm32-unknown-unknown --profile wasm
//   node tests/bench/wasm_size_profile.mjs $CARGO_TARGET_DIR/wasm32-unknown-unknown/wasm/hudi_edge.wasm [rows]
// The sizes of the shipped module are those of the same build stripped (the name section
// is a quarter of it); the table's percentages are of code + data, which stripping keeps.
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
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
const items = existsSync(twiggy)
  ? JSON.parse(execFileSync(twiggy, ['top', '-f', 'json', wasmPath], { maxBuffer: 1 << 30 }).toString())
  : itemsOf(readFileSync(wasmPath));

/** Rust's legacy mangling (`_ZN…E`, what the name section holds) as twiggy prints it. */
function demangle(name) {
  if (!name.startsWith('_ZN')) return name;
  const parts = [];
  let i = 3;
  while (i < name.length && name[i] !== 'E') {
    let j = i;
    while (/\d/.test(name[j])) j++;
    const len = Number(name.slice(i, j));
    if (!len) break;
    parts.push(name.slice(j, j + len));
    i = j + len;
  }
  const codes = { SP: '@', BP: '*', RF: '&', LT: '<', GT: '>', LP: '(', RP: ')', C: ',' };
  const ident = (p) =>
    p
      .replace(/^_\$/, '$')
      .replace(/\$([A-Z]{1,2}|u[0-9a-f]+)\$/g, (m, c) => codes[c] ?? (c.startsWith('u') ? String.fromCodePoint(parseInt(c.slice(1), 16)) : m))
      .replaceAll('..', '::');
  return parts.map(ident).join('::');
}

/** twiggy's `top` items without twiggy: each function body (named from the `name` section),
 *  each data segment, and the other sections whole. */
function itemsOf(wasm) {
  let p = 8;
  const leb = () => {
    let v = 0, shift = 0, b;
    do {
      b = wasm[p++];
      v += (b & 0x7f) * 2 ** shift;
      shift += 7;
    } while (b & 0x80);
    return v;
  };
  const str = () => {
    const n = leb();
    const t = wasm.subarray(p, p + n).toString('utf8');
    p += n;
    return t;
  };
  const names = new Map();
  const out = [];
  let imported = 0;
  let bodies = [];
  while (p < wasm.length) {
    const id = wasm[p++];
    const size = leb();
    const start = p;
    const end = p + size;
    if (id === 2) {
      for (let n = leb(), k = 0; k < n; k++) {
        str();
        str();
        const kind = wasm[p++];
        if (kind === 0) (leb(), imported++);
        else if (kind === 1) (p++, leb() & 1 ? (leb(), leb()) : leb());
        else if (kind === 2) (leb() & 1 ? (leb(), leb()) : leb());
        else if (kind === 3) p += 2;
      }
    } else if (id === 10) {
      for (let n = leb(), k = 0; k < n; k++) {
        const at = p;
        const len = leb();
        bodies.push(p + len - at);
        p += len;
      }
    } else if (id === 11) {
      let k = 0;
      for (let n = leb(); k < n; k++) {
        const at = p;
        const flags = leb();
        if (flags === 2) leb();
        if (flags !== 1) while (wasm[p++] !== 0x0b);
        p += leb();
        out.push({ name: `data[${k}]`, shallow_size: p - at });
      }
    } else if (id === 0) {
      const name = str();
      if (name === 'name') {
        while (p < end) {
          const sub = wasm[p++];
          const subEnd = leb() + p;
          if (sub === 1) for (let n = leb(), k = 0; k < n; k++) names.set(leb(), str());
          p = subEnd;
        }
      }
      out.push({ name: `custom section '${name}'`, shallow_size: end - start });
    } else {
      out.push({ name: `section ${id}`, shallow_size: end - start });
    }
    p = end;
  }
  bodies.forEach((size, k) => out.push({ name: demangle(names.get(imported + k) ?? `code[${k}]`), shallow_size: size }));
  return out;
}

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

// TOP=N PATTERN=re: the N largest items matching PATTERN instead of the table.
if (process.env.TOP) {
  const re = new RegExp(process.env.PATTERN ?? '');
  for (const it of items.filter((i) => re.test(i.name)).sort((a, b) => b.shallow_size - a.shallow_size).slice(0, Number(process.env.TOP))) {
    console.log(`${String(it.shallow_size).padStart(9)}  ${it.name.slice(0, 160)}`);
  }
  process.exit(0);
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
