// Builds the npm package into dist/: the two wasm modules (read, and full: reads and writes) and
// their bindings (from .ci/build-wasm's target/wasm-web, built first when missing or older than
// the Rust sources), then the TypeScript (ESM + .d.ts). Prints the sizes that matter to users.
//
//   HUDI_EDGE_WASM_WEB=dir   use this wasm-bindgen --target web output
//   CARGO_TARGET_DIR=dir     where .ci/build-wasm builds (its wasm-web is dir/wasm-web)
//   HUDI_EDGE_SKIP_WASM_BUILD=1   never run .ci/build-wasm (fail if there is no output)
//   HUDI_EDGE_WASM_OPT=1     wasm-opt -Oz the packaged module (`npm run build:publish`; slow,
//                            so tests and CI pack without it; `npm publish` refuses without it)
import { execFileSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';

const pkg = join(dirname(fileURLToPath(import.meta.url)), '..');
const repo = join(pkg, '..');
const targetDir = process.env.CARGO_TARGET_DIR ?? join(repo, 'target');
const wasmWeb = process.env.HUDI_EDGE_WASM_WEB ?? join(targetDir, 'wasm-web');
const modules = ['hudi_edge_read', 'hudi_edge'];
const wasmFile = join(wasmWeb, 'hudi_edge_read_bg.wasm');

function newest(dir) {
  let t = 0;
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, e.name);
    t = Math.max(t, e.isDirectory() ? newest(p) : statSync(p).mtimeMs);
  }
  return t;
}

function wasmIsStale() {
  if (!existsSync(wasmFile)) return 'missing';
  if (process.env.HUDI_EDGE_WASM_WEB || !existsSync(join(repo, 'src'))) return false;
  const sources = Math.max(newest(join(repo, 'src')), statSync(join(repo, 'Cargo.toml')).mtimeMs, statSync(join(repo, 'Cargo.lock')).mtimeMs);
  const built = Math.min(...modules.map((m) => (existsSync(join(wasmWeb, `${m}_bg.wasm`)) ? statSync(join(wasmWeb, `${m}_bg.wasm`)).mtimeMs : 0)));
  return sources > built ? 'older than the Rust sources' : false;
}

const stale = wasmIsStale();
if (stale && process.env.HUDI_EDGE_SKIP_WASM_BUILD !== '1' && !process.env.HUDI_EDGE_WASM_WEB) {
  console.log(`wasm module ${stale}: running .ci/build-wasm`);
  execFileSync(join(repo, '.ci', 'build-wasm'), { stdio: 'inherit', cwd: repo });
} else if (stale === 'missing') {
  console.error(`no wasm module at ${wasmFile}: run .ci/build-wasm (or set HUDI_EDGE_WASM_WEB)`);
  process.exit(1);
} else if (stale) {
  console.warn(`warning: ${relative(repo, wasmFile)} is ${stale} (HUDI_EDGE_SKIP_WASM_BUILD=1)`);
}

rmSync(join(pkg, 'dist'), { recursive: true, force: true });
// The bindings' types are compiled against (src/wasm is generated, not checked in).
for (const dest of [join(pkg, 'src', 'wasm'), join(pkg, 'dist', 'wasm')]) {
  mkdirSync(dest, { recursive: true });
  for (const m of modules) for (const f of [`${m}.js`, `${m}.d.ts`, `${m}_bg.wasm.d.ts`]) cpSync(join(wasmWeb, f), join(dest, f));
}
for (const m of modules) cpSync(join(wasmWeb, `${m}_bg.wasm`), join(pkg, 'dist', 'wasm', `${m}_bg.wasm`));
if (process.env.HUDI_EDGE_WASM_OPT === '1') {
  // The published module: binaryen's size pass (the features are those rustc's wasm32 target
  // emits). A marker lets `prepublishOnly` tell an optimized dist/ from a test build.
  const cache = process.env.HUDI_EDGE_CACHE ?? join(process.env.HOME ?? '', '.cache', 'hudi-edge');
  for (const m of modules) {
    const out = join(pkg, 'dist', 'wasm', `${m}_bg.wasm`);
    execFileSync(join(cache, 'node_modules', '.bin', 'wasm-opt'), ['-Oz', '--enable-bulk-memory', '--enable-nontrapping-float-to-int', '--enable-sign-ext', '--enable-mutable-globals', out, '-o', out], { stdio: 'inherit' });
  }
  writeFileSync(join(pkg, 'dist', 'wasm', '.wasm-opt'), 'wasm-opt -Oz\n');
}
for (const m of modules) rmSync(join(pkg, 'src', 'wasm', `${m}.js`));

execFileSync(process.execPath, [join(pkg, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', pkg], { stdio: 'inherit' });

// Sizes: what a user downloads (the wasm module dominates).
const kb = (n) => `${(n / 1024).toFixed(1)} KiB`;
const wasmSize = (m) => {
  const wasm = readFileSync(join(pkg, 'dist', 'wasm', `${m}_bg.wasm`));
  const gz = gzipSync(wasm, { level: 9 }).length;
  return `raw ${wasm.length} B (${kb(wasm.length)}), gzip ${gz} B (${kb(gz)})`;
};
const js = ['browser.js', 'index.js', 'table.js', 'errors.js', 'blob-storage.js', 'wasm-loader.js', 'wasm/hudi_edge_read.js', 'wasm/hudi_edge.js']
  .map((f) => readFileSync(join(pkg, 'dist', f)));
const jsRaw = js.reduce((n, b) => n + b.length, 0);
const jsGz = gzipSync(Buffer.concat(js), { level: 9 }).length;
console.log(`hudi-edge sizes: read module ${wasmSize('hudi_edge_read')}; full module (first write) ${wasmSize('hudi_edge')}; JS raw ${jsRaw} B, gzip ${jsGz} B (${kb(jsGz)}; apache-arrow not included)`);
