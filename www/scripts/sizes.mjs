// After a build: what a visitor downloads to open the viewer — every file index.html loads
// (HTML, JS, CSS, the read wasm module), gzipped as a server would send them. The full wasm
// module (fetched on the first write or fix), the SQL card's files (its chunk and DuckDB-wasm,
// fetched when it is opened: the chunks Vite's manifest lists only under dynamic imports) and
// the samples (fetched when opened) are listed apart.
import { readFileSync, readdirSync, statSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';

const dist = join(dirname(fileURLToPath(import.meta.url)), '..', 'dist');
const files = (dir) => readdirSync(dir, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? files(join(dir, e.name)) : [join(dir, e.name)]));
const kib = (n) => `${(n / 1024).toFixed(1)} KiB`;
const manifest = JSON.parse(readFileSync(join(dist, '.vite', 'manifest.json'), 'utf8'));
/** The files of the chunks reached from `keys` by static imports: the chunks, their CSS and assets. */
const reach = (keys, out = new Set()) => {
  for (const k of keys) {
    const c = manifest[k];
    if (!c || out.has(c.file)) continue;
    for (const f of [c.file, ...(c.css ?? []), ...(c.assets ?? [])]) out.add(f);
    reach(c.imports ?? [], out);
  }
  return out;
};
const entries = Object.keys(manifest).filter((k) => manifest[k].isEntry);
const first = reach(entries);
const onSql = new Set([...reach(Object.keys(manifest).filter((k) => manifest[k].isDynamicEntry))].filter((f) => !first.has(f)));
let raw = 0;
let gz = 0;
let later = 0;
let sql = 0;
const rows = [];
for (const f of files(dist)) {
  const rel = relative(dist, f);
  if (rel.startsWith('samples/') || rel.startsWith('.vite/')) continue;
  const bytes = readFileSync(f);
  const z = gzipSync(bytes, { level: 9 }).length;
  if (/\/hudi_edge_bg-[^/]*\.wasm$/.test(rel)) {
    later = z;
  } else if (onSql.has(rel)) {
    sql += z;
  } else {
    raw += bytes.length;
    gz += z;
  }
  rows.push(`  ${rel.padEnd(44)} ${kib(bytes.length).padStart(12)} ${kib(z).padStart(12)} gzip${onSql.has(rel) ? ' (SQL card)' : ''}`);
}
const samples = files(dist).filter((f) => relative(dist, f).startsWith('samples/')).reduce((n, f) => n + statSync(f).size, 0);
console.log(rows.join('\n'));
console.log(`viewer total transfer: ${kib(gz)} gzip (${kib(raw)} raw); the full wasm module ${kib(later)} gzip on the first write or fix; the SQL card ${kib(sql)} gzip when opened; sample tables ${kib(samples)}, loaded on demand`);
