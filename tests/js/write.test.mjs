// Writes from the wasm build in Node: a copy of a fixture table over a JS storage on node:fs
// gets an upsert (2 updates, 2 inserts) and a delete (1 key), as rows typed the way JS types
// them (apache-arrow's tableFromJSON). The same handle then reads the new rows, and PyPI
// `hudi` (hudi-rs) reads the same rows from disk. Refusals: a table opened from a zip, from
// files or over a storage without put fails UNSUPPORTED with no request; rows that do not
// fit fail INVALID_INPUT with nothing written.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, readdirSync, statSync, existsSync } from 'node:fs';
import { join, relative, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createRequire } from 'node:module';
import { execFileSync } from 'node:child_process';
import { homedir } from 'node:os';
import { tableFromJSON, tableToIPC } from 'apache-arrow';
import { fsStorage } from './fs_storage.mjs';
import { tableCopy, variantCopy } from '../lib/fixtures.mjs';
import { lines, sortedJson } from '../lib/harness.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const repo = join(here, '..', '..');
const fixtures = process.env.HUDI_EDGE_FIXTURES ?? join(repo, 'tests', 'data', 'fixtures');
const wasmDir = process.env.HUDI_EDGE_WASM_NODE ?? join(process.env.CARGO_TARGET_DIR ?? join(repo, 'target'), 'wasm-node');
const require = createRequire(import.meta.url);
const { WasmTable } = require(join(wasmDir, 'hudi_edge.js'));
const python = join(process.env.HUDI_EDGE_CACHE ?? join(homedir(), '.cache', 'hudi-edge'), 'venv', 'bin', 'python');

const COW = 'sample_table/cow/v9_txns_simple_nometa';
const MOR = 'sample_table/mor/avro/v9_txns_simple_nometa';

/** A fresh copy of a fixture table on disk; its root. */
const copy = (name) => tableCopy(name, 'write');

/** The fs storage, counting the calls that change storage. */
function counted(root, options) {
  const s = fsStorage(root, options);
  const calls = { put: 0, delete: 0 };
  if (s.put) {
    const { put, delete: del } = s;
    s.put = (...a) => (calls.put++, put(...a));
    s.delete = (...a) => (calls.delete++, del(...a));
  }
  return { storage: s, calls };
}

const ipc = (rows) => tableToIPC(tableFromJSON(rows), 'stream');
const dataOnly = (row) => Object.fromEntries(Object.entries(row).filter(([k]) => !k.startsWith('_hoodie_')));


/** The table's rows as hudi-rs reads them (fixtures' encoding). */
function hudiRsRows(root) {
  const out = execFileSync(python, [join(repo, 'tests', 'write', 'hudi_rs_rows.py'), root], { encoding: 'utf8' });
  return out.split('\n').filter(Boolean).map((l) => sortedJson(JSON.parse(l))).sort();
}

for (const name of [COW, MOR]) {
  test(`write over a JS storage, read back by this engine and by hudi-rs: ${name}`, async () => {
    const root = copy(name);
    const { storage, calls } = counted(root);
    const table = await WasmTable.openJs(storage);
    const before = await table.readJson({}, false);
    const byKey = new Map(before.map((r) => [r.txn_id, r]));

    // Two updates (a later txn_ts wins under event-time ordering), two inserts (one in a new
    // partition), as JSON gives them: longs as numbers, decimals and timestamps as text.
    const [a, b] = [...byKey.values()].sort((x, y) => (x.txn_id < y.txn_id ? -1 : 1));
    const updates = [a, b].map((r) => ({ ...dataOnly(r), merchant_name: `updated ${r.txn_id}`, txn_ts: r.txn_ts + 1 }));
    const template = dataOnly(a);
    const inserts = [
      { ...template, txn_id: 'TXN-901', merchant_name: 'new one', amount: '12.34', region: template.region },
      { ...template, txn_id: 'TXN-902', merchant_name: 'new two', txn_datetime: '2025-02-03T04:05:06.000007Z', txn_date: '2025-02-03', region: 'latam' },
    ];
    const upsert = await table.write(ipc([...updates, ...inserts]), { operation: 'upsert' });
    assert.equal(upsert.operation, 'upsert');
    assert.equal(upsert.action, name.includes('/mor/') ? 'deltacommit' : 'commit');
    assert.deepEqual(upsert.records, { inserted: 2, updated: 2, deleted: 0, deleteMissing: 0, deduplicated: 0 });
    assert.ok(upsert.filesWritten.length > 0 && upsert.io.puts > 0, JSON.stringify(upsert.io));
    assert.match(upsert.instant, /^\d{17}$/);

    // Delete one existing key (only key and partition columns), plus one that is nowhere.
    const gone = [...byKey.values()].find((r) => r.txn_id !== a.txn_id && r.txn_id !== b.txn_id);
    const del = await table.write(ipc([{ txn_id: gone.txn_id, region: gone.region }, { txn_id: 'TXN-NONE', region: 'us' }]), { operation: 'delete' });
    assert.deepEqual(del.records, { inserted: 0, updated: 0, deleted: 1, deleteMissing: 1, deduplicated: 0 });
    assert.ok(del.instant > upsert.instant);

    // The same handle sees both commits (it was reopened after each write).
    const timeline = await table.timeline(false);
    const completed = timeline.instants.filter((i) => i.state === 'completed').map((i) => i.requestedTime);
    assert.ok(completed.includes(upsert.instant) && completed.includes(del.instant));
    const after = await table.readJson({}, false);
    const want = new Map(byKey);
    for (const r of [...updates, ...inserts]) want.set(r.txn_id, r);
    want.delete(gone.txn_id);
    assert.deepEqual(
      lines(after.map(dataOnly)),
      lines([...want.values()].map(dataOnly)),
    );
    const fresh = await WasmTable.openJs(fsStorage(root));
    const ours = lines(await fresh.readJson({}, true));
    assert.deepEqual(lines(await table.readJson({}, true)), ours, 'a fresh open reads what the handle reads');

    // hudi-rs reads the same rows, meta columns included.
    assert.ok(existsSync(python), `${python} missing: run .ci/setup (PyPI hudi is the oracle)`);
    assert.deepEqual(hudiRsRows(root), ours);
    assert.ok(calls.put > 0);
  });
}

/** The codecs of the table's base files, as pyarrow reads their footers. */
const codecsOf = (root) =>
  execFileSync(python, ['-c', 'import sys, glob, pyarrow.parquet as pq; print(*{pq.ParquetFile(f).metadata.row_group(0).column(0).compression for f in glob.glob(sys.argv[1] + "/*/*.parquet") + glob.glob(sys.argv[1] + "/*.parquet")})', root], { encoding: 'utf8' }).split(/\s+/);

// Each base-file codec the engine writes, read back by the read module (what the package loads
// first): its zstd is built without the block compressors past level 3's (.cargo/config.toml).
test('every codec the engine writes reads back in the read module', async () => {
  const readModule = require(join(wasmDir, 'hudi_edge_read.js'));
  for (const codec of ['zstd', 'snappy', 'gzip', 'uncompressed']) {
    const root = copy(COW);
    const table = await WasmTable.openJs(fsStorage(root));
    const rows = (await table.readJson({}, false)).map((r) => ({ ...dataOnly(r), merchant_name: `${codec} ${r.txn_id}`, txn_ts: r.txn_ts + 1 }));
    await table.write(ipc(rows), { operation: 'upsert', options: { 'hoodie.parquet.compression.codec': codec } });
    assert.ok(codecsOf(root).includes(codec.toUpperCase()), codec);
    const read = await readModule.WasmTable.openJs(fsStorage(root));
    assert.deepEqual(lines(await read.readJson({}, false)), lines(await table.readJson({}, false)), codec);
    assert.ok((await read.readJson({}, false)).every((r) => r.merchant_name === `${codec} ${r.txn_id}`), codec);
  }
});

// A table without meta fields (Spark's, with files, column_stats and partition_stats): keys
// are the key field's values; incremental queries are refused as Hudi refuses them.
for (const kind of ['cow', 'mor']) test(`write over a JS storage into a table without meta fields: ${kind}`, async () => {
  const root = variantCopy(`spark_v9_no_meta_fields_${kind}`, 'write');
  const table = await WasmTable.openJs(fsStorage(root));
  const before = await table.readJson({}, false);
  assert.ok(before.every((r) => !('_hoodie_record_key' in r)), 'no meta columns in reads');
  const [a, b] = [...before].sort((x, y) => (x.id < y.id ? -1 : 1));
  const update = { ...a, name: 'updated by wasm', ts: a.ts + 1 };
  const loser = { ...b, name: 'loses on ts', ts: b.ts - 1 };
  const insert = { ...a, id: 'id-901', name: 'new from wasm' };
  const upsert = await table.write(ipc([update, loser, insert]), { operation: 'upsert' });
  assert.deepEqual(upsert.records, { inserted: 1, updated: 2, deleted: 0, deleteMissing: 0, deduplicated: 0 });
  const del = await table.write(ipc([{ id: b.id, part: b.part }]), { operation: 'delete' });
  assert.equal(del.records.deleted, 1);
  const want = new Map(before.map((r) => [r.id, r]));
  want.set(update.id, update);
  want.set(insert.id, insert);
  want.delete(b.id);
  assert.deepEqual(lines(await table.readJson({}, false)), lines([...want.values()]));
  const fresh = await WasmTable.openJs(fsStorage(root));
  assert.deepEqual(hudiRsRows(root), lines(await fresh.readJson({}, true)));
  assert.deepEqual(lines(await fresh.readJson({ filters: [['id', '=', 'id-901']] }, false)), lines([insert]));
  await assert.rejects(fresh.readJson({ query: 'incremental', start: upsert.instant }, false), (e) => e.code === 'UNSUPPORTED');
});

test('refused before any request: tables from a zip, from files, over a storage without put', async () => {
  const root = copy(COW);
  const walk = (d) => readdirSync(d).flatMap((n) => (statSync(join(d, n)).isDirectory() ? walk(join(d, n)) : [join(d, n)]));
  const tables = [
    ['zip', await WasmTable.openZip(readFileSync(join(fixtures, 'tables', `${COW}.zip`)), 'cow.zip')],
    ['files', await WasmTable.openFiles(walk(root).map((p) => [relative(root, p), new Uint8Array(readFileSync(p))]))],
    ['storage without put', await WasmTable.openJs(fsStorage(root, { readOnly: true }))],
  ];
  const rows = ipc([{ txn_id: 'TXN-901', region: 'us', txn_ts: 1 }]);
  for (const [what, table] of tables) {
    const io = table.io();
    await assert.rejects(table.write(rows, { operation: 'upsert' }), (e) => e.code === 'UNSUPPORTED' && /read-only/.test(e.message), what);
    const now = table.io();
    assert.equal(now.requests, io.requests, `${what}: no request`);
    assert.equal(now.puts, 0, what);
  }
});

test('rows that do not fit are INVALID_INPUT, with nothing written; the module lives on', async () => {
  const root = copy(COW);
  const { storage, calls } = counted(root);
  const table = await WasmTable.openJs(storage);
  const row = { txn_id: 'TXN-901', region: 'us', txn_ts: 1700000000000 };
  const cases = [
    ['unknown column', ipc([{ ...row, no_such_column: 'x' }]), /no_such_column/],
    ['a fraction for a long', ipc([{ ...row, txn_ts: 1.5 }]), /txn_ts/],
    ['a null record key', ipc([{ ...row, txn_id: null }]), /txn_id/],
    ['not Arrow IPC', new Uint8Array([1, 2, 3, 4, 5, 6, 7, 8, 9]), /Arrow IPC/],
    ['truncated Arrow IPC', ipc([row]).slice(0, 100), /Arrow IPC/],
  ];
  for (const [what, bytes, message] of cases) {
    await assert.rejects(table.write(bytes, { operation: 'upsert' }), (e) => e.code === 'INVALID_INPUT' && message.test(e.message), what);
  }
  await assert.rejects(table.write(ipc([row]), { operation: 'merge' }), (e) => e.code === 'INVALID_ARGUMENT', 'unknown operation');
  await assert.rejects(table.write(ipc([row]), {}), (e) => e.code === 'INVALID_ARGUMENT', 'no operation');
  assert.deepEqual(calls, { put: 0, delete: 0 });
  assert.equal((await table.readJson({}, false)).length, 12, 'still readable');
});
