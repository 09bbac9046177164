// What a cold query makes V8 compile: V8 compiles a wasm function (Liftoff) the first time it
// is called, so a cold first query pays for every function it reaches, in proportion to their
// size. Runs one query (open → first batch of a filtered stream()) in a fresh Node process
// with --trace-wasm-compilation-times and names the functions compiled, largest first.
//
//   node tests/bench/wasm_lazy_compile.mjs TABLE FILTER [ROWS]
//
// Needs the module bound for Node with its name section kept:
//   CARGO_TARGET_DIR=$T CARGO_PROFILE_WASM_STRIP=none cargo build --lib \
//     --target wasm32-unknown-unknown --profile wasm --no-default-features --features local,http,s3,zip
//   ~/.cache/hudi-edge/bin/wasm-bindgen --target nodejs --keep-debug --out-name hudi_edge \
//     --out-dir $T/wasm-node $T/wasm32-unknown-unknown/wasm/hudi_edge.wasm
// and HUDI_EDGE_WASM_NODE=$T/wasm-node. Prints the functions and bytes compiled, the largest
// functions and the bytes by crate.
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const [table, filter, rowsArg = '25'] = process.argv.slice(2);
const wasmDir = process.env.HUDI_EDGE_WASM_NODE;
if (!table || !filter || !wasmDir) {
  console.error('usage: HUDI_EDGE_WASM_NODE=DIR node wasm_lazy_compile.mjs TABLE FILTER [ROWS]');
  process.exit(2);
}

if (process.env.LAZY_CHILD === '1') {
  const { createRequire } = await import('node:module');
  const { fsStorage } = await import('../js/fs_storage.mjs');
  const { WasmTable } = createRequire(import.meta.url)(join(wasmDir, 'hudi_edge.js'));
  const t = await WasmTable.openJs(fsStorage(table), undefined, undefined, undefined, true);
  await t.stream({ filters: [filter] }).next();
  t.free();
  process.exit(0);
}

const trace = execFileSync(process.execPath, ['--trace-wasm-compilation-times', fileURLToPath(import.meta.url), table, filter], {
  env: { ...process.env, LAZY_CHILD: '1' },
  encoding: 'utf8',
  maxBuffer: 1 << 28,
  cwd: here,
});

/** Function names by index, from the module's `name` section. */
function functionNames(bytes) {
  let p = 8;
  const leb = () => {
    let r = 0;
    for (let s = 0, x; ; s += 7) {
      x = bytes[p++];
      r += (x & 0x7f) * 2 ** s;
      if (!(x & 0x80)) return r;
    }
  };
  const names = new Map();
  while (p < bytes.length) {
    const id = bytes[p++];
    const len = leb();
    const end = p + len;
    if (id === 0) {
      const nameLen = leb();
      const section = bytes.subarray(p, p + nameLen).toString();
      p += nameLen;
      while (section === 'name' && p < end) {
        const sub = bytes[p++];
        const subEnd = leb() + p;
        if (sub === 1) {
          for (let n = leb(); n > 0; n--) {
            const index = leb();
            const l = leb();
            names.set(index, bytes.subarray(p, p + l).toString());
            p += l;
          }
        }
        p = subEnd;
      }
    }
    p = end;
  }
  return names;
}

const names = functionNames(readFileSync(join(wasmDir, 'hudi_edge_bg.wasm')));
if (names.size === 0) {
  console.error(`${wasmDir}/hudi_edge_bg.wasm has no name section (build it with CARGO_PROFILE_WASM_STRIP=none)`);
  process.exit(1);
}
const compiled = [...trace.matchAll(/#(\d+) using Liftoff.*bodysize (\d+)/g)].map((m) => [
  Number(m[2]),
  (names.get(Number(m[1])) ?? `#${m[1]}`).replace(/::h[0-9a-f]{16}$/, ''),
]);
const total = compiled.reduce((n, [size]) => n + size, 0);
console.log(`${filter}: ${compiled.length} functions compiled, ${total} bytes of code`);
compiled.sort((a, b) => b[0] - a[0]);
for (const [size, name] of compiled.slice(0, Number(rowsArg))) console.log(String(size).padStart(8), name.slice(0, 140));
const byCrate = new Map();
for (const [size, name] of compiled) {
  const crate = name.replace(/^<+/, '').split('::')[0].replace(/\[.*$/, '');
  byCrate.set(crate, (byCrate.get(crate) ?? 0) + size);
}
console.log('by crate:', [...byCrate].sort((a, b) => b[1] - a[1]).slice(0, 12).map(([c, n]) => `${c} ${n}`).join(', '));
