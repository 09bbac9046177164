// The wasm build in Node on tables whose expectations two readers gave (PyPI `hudi` and Apache
// Hudi Spark 1.1.1): the hudi-rs writer matrix and decimal tables (tests/data/hudi_rs, see
// tests/hudi_rs.rs) —
// every query equal, plans from the metadata table (whose HFiles store zero checksums), its
// indexes pruning — and the Spark writer variants (tests/data/spark_variants).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, readdirSync } from 'node:fs';
import { join, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createRequire } from 'node:module';
import { lines } from '../lib/harness.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const repo = join(here, '..', '..');
const data = join(repo, 'tests', 'data', 'hudi_rs');
const variants = join(repo, 'tests', 'data', 'spark_variants');
const wasmDir = process.env.HUDI_EDGE_WASM_NODE ?? join(process.env.CARGO_TARGET_DIR ?? join(repo, 'target'), 'wasm-node');
const { WasmTable } = createRequire(import.meta.url)(join(wasmDir, 'hudi_edge.js'));

const optionsOf = (q) => {
  switch (q.kind) {
    case 'snapshot': return {};
    case 'read_optimized': return { query: 'read_optimized' };
    case 'time_travel': return { asOf: q.as_of };
    case 'filter': return { filters: q.filters };
    // Spark's "from the beginning" is "000"; ours is no start.
    default: return { query: 'incremental', ...(q.start !== '000' ? { start: q.start } : {}), end: q.end };
  }
};
const expectedRows = (exp, q) => (q.agree ? q : q[q.right]).row_ids.map((i) => exp.rows[i]);
// Where the reader Hudi backs refused the query (Spark's own HoodieException).
const refusal = (q) => (q.agree ? undefined : q[q.right].error);

async function checkQueries(dir, name) {
  const exp = JSON.parse(readFileSync(join(dir, `${name}.json`), 'utf8'));
  const table = await WasmTable.openZip(readFileSync(join(dir, `${name}.zip`)), name);
  const timeline = await table.timeline(false);
  const completed = timeline.instants.filter((i) => i.state === 'completed').map((i) => [i.requestedTime, i.action]);
  assert.deepEqual(completed, exp.completed_instants.map((c) => [c.requested_time, c.action]));
  for (const q of exp.queries) {
    if (refusal(q)) {
      await assert.rejects(table.readJson(optionsOf(q), true), (e) => e.code === 'UNSUPPORTED', `${name}: ${q.id}`);
      continue;
    }
    const got = await table.readJson(optionsOf(q), true);
    // As sets: rows are listed by record key, which a table without meta fields lacks.
    assert.deepEqual(lines(got), lines(expectedRows(exp, q)), `${name}: ${q.id}`);
  }
  return table;
}

for (const zip of readdirSync(data).filter((n) => n.endsWith('.zip')).sort()) {
  const name = zip.replace(/\.zip$/, '');
  test(`wasm: ${name}`, async () => {
    const table = await checkQueries(data, name);
    const plan = await table.plan({});
    assert.equal(plan.stats.planningSource, 'metadata_table');
    assert.ok(plan.stats.planningNotes.some((n) => n.includes('store zeros')), plan.stats.planningNotes.join('\n'));
    // The decimal tables have their own keys and columns: their filters are in the queries.
    if (name.includes('decimals')) return;
    const byKey = await table.plan({ filters: [['id', '=', 'id-0050']] });
    assert.equal(byKey.fileSlices.length, 1, byKey.stats.planningNotes.join('\n'));
    assert.equal(byKey.stats.filesAfterRecordIndex, byKey.fileSlices[0].logFiles.length + (byKey.fileSlices[0].baseFile ? 1 : 0));
    const byStats = await table.plan({ filters: [['ts', '<', '1030']] });
    assert.ok(byStats.stats.filesAfterColumnStats < byStats.stats.filesAfterPartitionPruning, byStats.stats.planningNotes.join('\n'));
  });
}

for (const zip of readdirSync(variants).filter((n) => n.endsWith('.zip')).sort()) {
  const name = zip.replace(/\.zip$/, '');
  test(`wasm: ${name}`, async () => {
    await checkQueries(variants, name);
  });
}
