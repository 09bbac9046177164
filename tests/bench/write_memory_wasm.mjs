// Peak memory of one write in wasm, against the bound the writer keeps: 64 MB + 3 × the
// input's size. Inputs of several sizes (Arrow IPC, as the package hands rows to the engine),
// each upserted into a fresh Merge-On-Read and Copy-On-Write table created on local files; a
// second upsert of the same rows updates every key (so tagging and merging read them back).
// Reports the engine's linear memory (it grows as needed and never shrinks: its size after the
// write is its peak) and the process's peak RSS. One Node process per case.
//
// Usage: node tests/bench/write_memory_wasm.mjs [MiB ...]     (default: 1 4 8 15)
// Needs: the package built (.ci/build-wasm; cd pkg-config && npm run build).
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const repo = join(fileURLToPath(import.meta.url), '..', '..', '..');
const MB = 1 << 20;

if (process.argv[2] === '--case') {
  const [, , , kind, mib] = process.argv;
  const { HudiTable, wasmMemoryBytes, initWasm } = await import(join(repo, 'pkg-config', 'dist', 'node.js'));
  const arrow = createRequire(join(repo, 'pkg-config', 'package.json'))('apache-arrow');
  await initWasm();
  const dir = mkdtempSync(join(tmpdir(), 'write-memory-'));
  try {
    // ~118 bytes of IPC per row.
    const n = Math.round((Number(mib) * MB) / 118);
    const ids = Array.from({ length: n }, (_, i) => `K-${String(i).padStart(9, '0')}`);
    const batch = (ts) =>
      arrow.tableToIPC(
        new arrow.Table({
          id: arrow.vectorFromArray(ids, new arrow.Utf8()),
          ts: arrow.vectorFromArray(ids.map(() => BigInt(ts)), new arrow.Int64()),
          region: arrow.vectorFromArray(ids.map((_, i) => ['us', 'eu', 'apac'][i % 3]), new arrow.Utf8()),
          payload: arrow.vectorFromArray(ids.map((k) => `${k} `.repeat(7)), new arrow.Utf8()),
        }),
        'stream',
      );
    const t = await HudiTable.create(join(dir, 't'), {
      type: kind,
      columns: 'id STRING NOT NULL, ts BIGINT, region STRING, payload STRING',
      recordKey: 'id',
      partitionBy: 'region',
      orderingFields: 'ts',
    });
    const opened = wasmMemoryBytes();
    const first = batch(1);
    const started = performance.now();
    const a = await t.upsert(first);
    const insertMs = performance.now() - started;
    const afterInsert = wasmMemoryBytes();
    const again = performance.now();
    const b = await t.upsert(batch(2));
    const updateMs = performance.now() - again;
    const hwm = Number(/VmHWM:\s+(\d+)/.exec(readFileSync('/proc/self/status', 'utf8'))[1]) * 1024;
    t.close();
    console.log(JSON.stringify({
      kind, rows: n, inputBytes: first.byteLength, inserted: a.inserted, updated: b.updated,
      wasmAfterOpen: opened, wasmAfterInsert: afterInsert, wasmPeak: wasmMemoryBytes(), rssPeak: hwm,
      insertMs: Math.round(insertMs), updateMs: Math.round(updateMs),
    }));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
} else {
  const sizes = process.argv.slice(2).length ? process.argv.slice(2) : ['1', '4', '8', '15'];
  const mb = (b) => (b / MB).toFixed(1);
  console.log('| table | input (Arrow IPC) | rows | wasm memory after open | wasm peak | bound 64 MB + 3× input | within | process RSS peak | insert / update ms |');
  console.log('|---|---:|---:|---:|---:|---:|---|---:|---:|');
  for (const kind of ['mor', 'cow']) {
    for (const mib of sizes) {
      const out = execFileSync(process.execPath, [fileURLToPath(import.meta.url), '--case', kind, mib], { encoding: 'utf8', maxBuffer: 16 << 20 });
      const r = JSON.parse(out.trim().split('\n').at(-1));
      if (r.inserted !== r.rows || r.updated !== r.rows) throw new Error(`${kind} ${mib} MiB: ${JSON.stringify(r)}`);
      const bound = 64 * MB + 3 * r.inputBytes;
      console.log(`| ${kind} | ${mb(r.inputBytes)} MB | ${r.rows} | ${mb(r.wasmAfterOpen)} MB | ${mb(r.wasmPeak)} MB | ${mb(bound)} MB | ${r.wasmPeak <= bound ? 'yes' : '**no**'} | ${mb(r.rssPeak)} MB | ${r.insertMs} / ${r.updateMs} |`);
    }
  }
}
