// A Merge-On-Read table's compaction in wasm through the npm package, in Node: every file
// group with log files compacted at once (`compact()`, the plan scheduled and executed in one
// call) on a copy of TABLE. Prints one JSON line: wall time, the file groups, log files, rows
// and bytes it wrote, the engine's linear memory before and after (it grows as needed and
// never shrinks: after is the peak) and the process's RSS. An edge isolate (a Cloudflare
// Worker: 128 MB) runs the same compaction after a POST's answer when it comes due.
//
//   node tests/bench/compaction_memory_wasm.mjs [TABLE]   (default ~/.cache/hudi-edge/tables/bench_mor_v9)
//
// Needs the package built (cd pkg-config && npm run build); $HUDI_EDGE_PKG_DIST picks another.
import { cpSync, mkdtempSync, rmSync } from 'node:fs';
import { homedir, tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const repo = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const source = process.argv[2] ?? join(homedir(), '.cache', 'hudi-edge', 'tables', 'bench_mor_v9');
const dist = process.env.HUDI_EDGE_PKG_DIST ?? join(repo, 'pkg-config', 'dist');
const scratch = mkdtempSync(join(tmpdir(), 'compaction-memory-'));
try {
  const table = join(scratch, 'table');
  cpSync(source, table, { recursive: true });
  const { HudiTable, wasmMemoryBytes } = await import(join(dist, 'node.js'));
  const t = await HudiTable.open(table);
  await t.fileGroups();
  const before = wasmMemoryBytes();
  const t0 = performance.now();
  const done = await t.compact({ options: { 'hoodie.compact.inline.max.delta.commits': '1' } });
  const ms = performance.now() - t0;
  t.close();
  const [c] = done.completed;
  if (!c) throw new Error(`nothing compacted: ${done.notScheduled ?? JSON.stringify(done)}`);
  const mib = (n) => +(n / 2 ** 20).toFixed(1);
  console.log(
    JSON.stringify({
      table: source,
      ms: Math.round(ms),
      file_groups: c.fileGroups,
      log_files: c.logFiles,
      rows: c.recordsWritten,
      written_mib: mib(c.bytesWritten),
      wasm_before_mib: mib(before),
      wasm_peak_mib: mib(wasmMemoryBytes()),
      rss_mib: mib(process.memoryUsage().rss),
      dist,
    }),
  );
} finally {
  rmSync(scratch, { recursive: true, force: true });
}
