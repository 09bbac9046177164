// `table.write`: plain objects and an apache-arrow Table into a copy of a fixture table over a
// storage object with put/delete (node:fs); the table shows the commits; typed errors for a
// read-only table and for rows that do not fit; Arrow input from another copy of apache-arrow.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { cpSync } from 'node:fs';
import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { createRequire } from 'node:module';
import { DataType, tableFromArrays, tableToIPC } from 'apache-arrow';
import { HudiTable, InvalidInputError, ReadOnlyError, InvalidArgumentError } from 'hudi-edge';
import { fixtures, unzippedFixtures } from '../../tests/web/lib/servers.mjs';
import { fsStorage } from '../../tests/js/fs_storage.mjs';
import { tempDir } from '../../tests/lib/harness.mjs';

const COW = 'sample_table/cow/v9_txns_simple_nometa';

function copy(name) {
  const dir = join(tempDir('pkg-write'), 't');
  cpSync(join(unzippedFixtures(), 'tables', name), dir, { recursive: true });
  return dir;
}

test('write: objects (as rows() gives them) and an arrow Table; the table shows the commits', async () => {
  const t = await HudiTable.openStorage(fsStorage(copy(COW)));
  const before = await t.rows();
  const layout = await t.fileGroups();
  const row = before.find((r) => r.region === 'us');
  const changed = { ...row, merchant_name: 'changed', txn_ts: row.txn_ts + 1 };
  const r = await t.write([changed, { ...row, _hoodie_record_key: undefined, txn_id: 'TXN-PKG' }], { operation: 'upsert' });
  assert.deepEqual(r.records, { inserted: 1, updated: 1, deleted: 0, deleteMissing: 0, deduplicated: 0 });
  assert.equal(r.operation, 'upsert');
  assert.equal(r.action, 'commit');
  assert.ok(r.filesWritten.length > 0 && r.io.puts > 0);
  assert.notDeepEqual(await t.fileGroups(), layout, 'the cached layout was dropped');
  // read() (Arrow, in pieces) sees the commit too, as rows() does.
  const arrow = await t.read({ filters: [`txn_id = TXN-PKG`] });
  assert.equal(arrow.numRows, 1);
  assert.equal(arrow.getChild('txn_id').get(0), 'TXN-PKG');

  const del = await t.write(tableFromArrays({ txn_id: ['TXN-PKG'], region: ['us'] }), { operation: 'delete' });
  assert.equal(del.records.deleted, 1);
  const after = await t.rows();
  assert.equal(after.length, before.length);
  assert.equal(after.find((x) => x.txn_id === row.txn_id).merchant_name, 'changed');
  assert.ok(!after.some((x) => x.txn_id === 'TXN-PKG'));
  const instants = await t.timeline();
  assert.deepEqual(instants.slice(-2).map((i) => [i.requestedTime, i.operation]), [[r.instant, 'UPSERT'], [del.instant, 'DELETE']]);
  t.close();
});

test('write: typed errors for read-only tables and rows that do not fit', async () => {
  const zip = await HudiTable.openZip(await readFile(join(fixtures, 'tables', `${COW}.zip`)), 'cow.zip');
  // One code for the condition, whichever write call meets it (upsert() says the same).
  await assert.rejects(zip.write([{ txn_id: 'X', region: 'us', txn_ts: 1 }], { operation: 'upsert' }), (e) => e instanceof ReadOnlyError && e.code === 'READ_ONLY');
  assert.equal(zip.io().puts, 0);

  const t = await HudiTable.openStorage(fsStorage(copy(COW)));
  const fails = (rows) => assert.rejects(t.write(rows, { operation: 'upsert' }), (e) => e instanceof InvalidInputError && e.code === 'INVALID_INPUT');
  await fails([{ txn_id: 'X', region: 'us', txn_ts: 1, no_such_column: 1 }]);
  await fails([]);
  await fails([{ txn_id: 'X', region: 'us', txn_ts: Symbol('no') }]);
  await assert.rejects(t.write({ not: 'rows' }, { operation: 'upsert' }), InvalidArgumentError);
  await assert.rejects(t.write({ schema: {}, batches: [] }, { operation: 'upsert' }), InvalidArgumentError);
  // Table-shaped but not a Table (another library's object, a damaged one): typed, not a TypeError.
  await fails({ schema: { fields: [{ name: 'txn_id', type: { typeId: 5 } }] }, batches: [{}] });
  await fails({ schema: { fields: [{ name: 'txn_id', type: { typeId: 99 } }] }, batches: [] });
  assert.equal(t.io().puts, 0);
});

// An application's apache-arrow is often not the package's: another version, or the CommonJS
// build beside the ES module one. apache-arrow's `instanceof Table` holds across copies but its
// IPC writer's type checks do not, and such a Table used to arrive as a broken IPC stream.
test('write: Tables and RecordBatches from apache-arrow 17 and from the CommonJS build', async () => {
  const arrow17 = await import('apache-arrow-17');
  const cjs = createRequire(import.meta.url)('apache-arrow');
  const t = await HudiTable.openStorage(fsStorage(copy(COW)));
  const data = (rows) =>
    rows.map(({ _hoodie_commit_time, _hoodie_commit_seqno, _hoodie_file_name, ...r }) => r).sort((a, b) => (a.txn_id < b.txn_id ? -1 : 1));
  const before = await t.rows();

  // The table's own rows in every type it has (strings, int64, timestamp, date, decimals,
  // bool) as version 17 holds them: written back, they change nothing.
  const same = arrow17.tableFromIPC(tableToIPC(await t.read(), 'stream'));
  assert.ok(!(same.schema.fields[0].type instanceof DataType), 'a foreign copy');
  const r = await t.upsert(same);
  assert.deepEqual([r.inserted, r.updated, r.deleted], [0, before.length, 0]);
  assert.deepEqual(data(await t.rows()), data(before));

  // A version 17 RecordBatch inferred from JSON (dictionary strings, Float64), then a delete
  // of it keyed by a RecordBatch of the CommonJS build.
  const { _hoodie_commit_time, _hoodie_commit_seqno, _hoodie_record_key, _hoodie_partition_path, _hoodie_file_name, ...row } = before[0];
  const added = { ...row, txn_id: 'TXN-V17', merchant_name: 'from arrow 17' };
  const batch = arrow17.tableFromJSON([added]).batches[0];
  assert.equal((await t.insert(batch)).inserted, 1);
  const got = (await t.rows()).find((x) => x.txn_id === 'TXN-V17');
  assert.deepEqual(data([got]), data([{ ...added, _hoodie_record_key: 'TXN-V17', _hoodie_partition_path: before[0]._hoodie_partition_path }]));
  const keys = cjs.tableFromArrays({ txn_id: ['TXN-V17'], region: [row.region] });
  assert.ok(!(keys.schema.fields[0].type instanceof DataType), 'a foreign copy');
  assert.equal((await t.delete(keys.batches[0])).deleted, 1);
  assert.deepEqual(data(await t.rows()), data(before));
  t.close();
});

test('write: the .d.ts takes another version\'s Table and RecordBatch (tsc)', () => {
  const here = fileURLToPath(new URL('.', import.meta.url));
  const tsc = join(here, '..', 'node_modules', 'typescript', 'bin', 'tsc');
  const flags = ['--noEmit', '--strict', '--module', 'nodenext', '--moduleResolution', 'nodenext', '--target', 'es2022', '--skipLibCheck'];
  execFileSync(process.execPath, [tsc, ...flags, join(here, 'typed', 'foreign-arrow.ts')], { stdio: 'inherit' });
});

test('write: JSON-shaped values: a decimal as a number is the decimal it spells, int64 as text or a safe integer', async () => {
  const t = await HudiTable.openStorage(fsStorage(copy(COW)));
  const { _hoodie_commit_time, _hoodie_commit_seqno, _hoodie_record_key, _hoodie_partition_path, _hoodie_file_name, ...row } = (await t.rows())[0];
  await t.upsert([{ ...row, amount: 1.005, fee_amount: 0.29 }]);
  const got = (await t.rows()).find((x) => x.txn_id === row.txn_id);
  assert.deepEqual([got.amount, got.fee_amount], ['1.01', '0.29']);
  await assert.rejects(t.upsert([{ ...row, amount: 1e13 }]), (e) => e instanceof InvalidInputError && e.column === 'amount' && e.row === 0);
  await t.upsert([{ ...row, txn_ts: '9007199254740993' }]);
  assert.equal((await t.rows()).find((x) => x.txn_id === row.txn_id).txn_ts, 9007199254740993n);
  // JSON that spells only the large int64 values as text: numbers and strings in one column.
  const other = (await t.rows()).find((x) => x.txn_id !== row.txn_id);
  await t.upsert([{ ...row, txn_ts: '9007199254740995' }, { ...other, txn_ts: other.txn_ts + 1 }]);
  const now = await t.rows();
  assert.deepEqual([now.find((x) => x.txn_id === row.txn_id).txn_ts, now.find((x) => x.txn_id === other.txn_id).txn_ts], [9007199254740995n, other.txn_ts + 1]);
  await assert.rejects(t.upsert([{ ...row, txn_ts: '1' }, { ...other, txn_ts: 2 ** 53 + 2 }]), (e) => e instanceof InvalidInputError && e.column === 'txn_ts' && e.row === 1);
  // JSON.parse('9007199254740993') is 9007199254740992: which integer was meant is lost.
  await assert.rejects(t.upsert([{ ...row, txn_ts: 2 ** 53 + 2 }]), (e) => e instanceof InvalidInputError && e.column === 'txn_ts' && /safe integers/.test(e.message));
  t.close();
});

test('write: text of objects in any script and length comes back as written', async () => {
  const t = await HudiTable.openStorage(fsStorage(copy(COW)));
  const rows = await t.rows();
  const { _hoodie_commit_time, _hoodie_commit_seqno, _hoodie_record_key, _hoodie_partition_path, _hoodie_file_name, ...row } = rows[0];
  // ASCII first (the buffer is sized for it), then text that needs more room than that.
  const names = ['plain', 'é'.repeat(5000), '😀 漢字 ü', '', 'x'.repeat(70000) + '€'];
  await t.upsert(names.map((merchant_name, i) => ({ ...row, txn_id: `TXN-TEXT-${i}`, merchant_name })));
  const got = (await t.rows()).filter((x) => x.txn_id.startsWith('TXN-TEXT-')).sort((a, b) => a.txn_id.localeCompare(b.txn_id));
  assert.deepEqual(got.map((x) => x.merchant_name), names);
  t.close();
});

test('write: a bucket-index table is written with its writers\' bucket settings, refused without them', async () => {
  // Spark-written, 2 buckets on `id`; hoodie.properties does not say so, the file ids do.
  const here = fileURLToPath(new URL('.', import.meta.url));
  const dir = tempDir('pkg-bucket');
  execFileSync('unzip', ['-q', join(here, '..', '..', 'tests', 'data', 'spark_variants', 'spark_v9_bucket_cow.zip'), '-d', dir]);
  const t = await HudiTable.openStorage(fsStorage(join(dir, 'spark_v9_bucket_cow')));
  const { _hoodie_commit_time, _hoodie_commit_seqno, _hoodie_record_key, _hoodie_partition_path, _hoodie_file_name, ...row } = (await t.rows())[0];
  const fresh = { ...row, id: 'pkg-new-key' };
  await assert.rejects(t.upsert([fresh]), (e) => e instanceof InvalidArgumentError && /hoodie\.bucket\.index\.num\.buckets/.test(e.message));
  const options = { 'hoodie.index.type': 'BUCKET', 'hoodie.bucket.index.num.buckets': '2', 'hoodie.bucket.index.hash.field': 'id' };
  const r = await t.upsert([fresh], { options });
  assert.equal(r.inserted, 1);
  const written = (await t.rows()).find((x) => x.id === 'pkg-new-key');
  // Java's List.of(key).hashCode() over 2 buckets: the row sits in that bucket's file group.
  let h = 0;
  for (const c of 'pkg-new-key') h = (Math.imul(h, 31) + c.charCodeAt(0)) | 0;
  const bucket = ((31 + h) & 0x7fffffff) % 2;
  assert.ok(written._hoodie_file_name.startsWith(`0000000${bucket}-`), written._hoodie_file_name);
  const files = r.filesWritten.map((f) => f.split('/').pop());
  assert.ok(files.every((f) => /^0000000[01]-/.test(f)), `${files}`);
  t.close();
});
