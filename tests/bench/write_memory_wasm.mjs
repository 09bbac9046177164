// Peak memory of one write in wasm, against the bound the writer keeps: 64 MB + 3 × the
// input's size. Inputs of several sizes, each upserted into a fresh Merge-On-Read and
// Copy-On-Write table created on local files; a second upsert of the same keys updates every
// one (so tagging and merging read them back). Two ways in:
//   ipc      Arrow IPC bytes (what the package hands the engine)
//   objects  plain JS objects, turned into Arrow by the package first
// Reports the engine's linear memory (it grows as needed and never shrinks: its size after the
// writes is its peak); for objects, what their conversion to Arrow IPC takes on the JS side
// (the package's own code run once before the writes, measured as the JS heap and buffers it
// grew by: apache-arrow's table, the IPC bytes and garbage not yet collected; the objects
// themselves are the caller's) and that added to the wasm peak; and the process's RSS peak. The input's size
// is its Arrow IPC size either way. One process per case.
//
// Usage: node tests/bench/write_memory_wasm.mjs [MiB ...]     (default: 1 4 8 16)
// Needs: the package built (.ci/build-wasm; cd pkg-config && npm run build).
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const repo = join(fileURLToPath(import.meta.url), '..', '..', '..');
const MB = 1 << 20;

/** The process's peak RSS, in bytes. */
function rssPeak() {
  return Number(/VmHWM:\s+(\d+)/.exec(readFileSync('/proc/self/status', 'utf8'))[1]) * 1024;
}

if (process.argv[2] === '--case') {
  const [, , , kind, mib, way] = process.argv;
  const { HudiTable, wasmMemoryBytes, initWasm } = await import(join(repo, 'pkg-config', 'dist', 'node.js'));
  // The package's own apache-arrow (its ES module: the one the package's code imports).
  const arrow = await import(join(repo, 'pkg-config', 'node_modules', 'apache-arrow', 'Arrow.node.mjs'));
  await initWasm();
  const dir = mkdtempSync(join(tmpdir(), 'write-memory-'));
  try {
    // ~118 bytes of IPC per row.
    const n = Math.round((Number(mib) * MB) / 118);
    const ids = Array.from({ length: n }, (_, i) => `K-${String(i).padStart(9, '0')}`);
    const region = (i) => ['us', 'eu', 'apac'][i % 3];
    const payload = (k) => `${k} `.repeat(7);
    const ipc = (ts) =>
      arrow.tableToIPC(
        new arrow.Table({
          id: arrow.vectorFromArray(ids, new arrow.Utf8()),
          ts: arrow.vectorFromArray(ids.map(() => BigInt(ts)), new arrow.Int64()),
          region: arrow.vectorFromArray(ids.map((_, i) => region(i)), new arrow.Utf8()),
          payload: arrow.vectorFromArray(ids.map(payload), new arrow.Utf8()),
        }),
        'stream',
      );
    const objects = (ts) => ids.map((id, i) => ({ id, ts: BigInt(ts), region: region(i), payload: payload(id) }));
    const rows = (ts) => (way === 'objects' ? objects(ts) : ipc(ts));
    const t = await HudiTable.create(join(dir, 't'), {
      type: kind,
      columns: 'id STRING NOT NULL, ts BIGINT, region STRING, payload STRING',
      recordKey: 'id',
      partitionBy: 'region',
      orderingFields: 'ts',
    });
    const inputBytes = ipc(1).byteLength;
    let jsRise = 0;
    if (way === 'objects') {
      const { rowsToArrow } = await import(join(repo, 'pkg-config', 'dist', 'rows-arrow.js'));
      const given = objects(1);
      const used = () => {
        const m = process.memoryUsage();
        return m.heapUsed + m.external + m.arrayBuffers;
      };
      globalThis.gc();
      globalThis.gc();
      const before = used();
      const table = rowsToArrow(given);
      const bytes = arrow.tableToIPC(table, 'stream');
      // What the conversion allocated that no full collection has freed yet (young
      // collections run meanwhile): close to its peak, the Arrow table and the IPC bytes too.
      jsRise = used() - before;
      if (bytes.byteLength !== inputBytes) throw new Error(`objects became ${bytes.byteLength} bytes of IPC, not ${inputBytes}`);
    }
    // Sizes past the default limit are measured too.
    const options = { 'hudi-edge.write.max.input.bytes': String(Math.max(inputBytes, 1)), 'hudi-edge.write.max.objects.bytes': String(Math.max(inputBytes, 1)) };
    const opened = wasmMemoryBytes();
    const upsert = async (ts) => {
      const input = rows(ts);
      const started = performance.now();
      const r = await t.upsert(input, { options });
      return [r, Math.round(performance.now() - started)];
    };
    const [a, insertMs] = await upsert(1);
    const afterInsert = wasmMemoryBytes();
    const [b, updateMs] = await upsert(2);
    t.close();
    console.log(JSON.stringify({
      kind, way, rows: n, inputBytes, inserted: a.inserted, updated: b.updated,
      wasmAfterOpen: opened, wasmAfterInsert: afterInsert, wasmPeak: wasmMemoryBytes(), jsRise, rssPeak: rssPeak(),
      insertMs, updateMs,
    }));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
} else {
  const sizes = process.argv.slice(2).length ? process.argv.slice(2) : ['1', '4', '8', '16'];
  const mb = (b) => (b / MB).toFixed(1);
  const js = (r, plus = 0) => (r.way === 'objects' ? `${mb(r.jsRise + plus)} MB` : '–');
  console.log('| rows given as | table | input (Arrow IPC) | rows | wasm memory after open | wasm peak | bound 64 MB + 3× input | within | JS: objects → IPC | wasm peak + JS | process RSS peak | insert / update ms |');
  console.log('|---|---|---:|---:|---:|---:|---:|---|---:|---:|---:|---:|');
  for (const way of ['ipc', 'objects']) {
    for (const kind of ['mor', 'cow']) {
      for (const mib of sizes) {
        const out = execFileSync(process.execPath, ['--expose-gc', fileURLToPath(import.meta.url), '--case', kind, mib, way], { encoding: 'utf8', maxBuffer: 16 << 20 });
        const r = JSON.parse(out.trim().split('\n').at(-1));
        if (r.inserted !== r.rows || r.updated !== r.rows) throw new Error(`${kind} ${mib} MiB: ${JSON.stringify(r)}`);
        const bound = 64 * MB + 3 * r.inputBytes;
        console.log(`| ${way} | ${kind} | ${mb(r.inputBytes)} MB | ${r.rows} | ${mb(r.wasmAfterOpen)} MB | ${mb(r.wasmPeak)} MB | ${mb(bound)} MB | ${r.wasmPeak <= bound ? 'yes' : '**no**'} | ${js(r)} | ${js(r, r.wasmPeak)} | ${mb(r.rssPeak)} MB | ${r.insertMs} / ${r.updateMs} |`);
      }
    }
  }
}
