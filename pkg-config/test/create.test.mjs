// `HudiTable.create`: a new table on moto's S3 from a Spark SQL column list, written by the
// package and read alike by the package, PyPI `hudi` and the CLI; a second create of the same
// location (or two at once) is a ConflictError; an apache-arrow Schema (from another copy of
// apache-arrow) over a storage object; bad specs refused before any request.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { HudiTable, ConflictError, InvalidArgumentError, InvalidInputError, ReadOnlyError, UnsupportedError } from 'hudi-edge';
import { Int32, Int64, Table, Utf8, vectorFromArray } from 'apache-arrow';
import { startMoto } from '../../tests/web/lib/servers.mjs';
import { assertReadersAgree, loadTables, s3Options } from '../../tests/web/lib/writes.mjs';
import { fsStorage } from '../../tests/js/fs_storage.mjs';
import { tempDir } from '../../tests/lib/harness.mjs';

const BUCKET = 'pkg-create';
let moto;
let s3;

before(async () => {
  moto = await startMoto();
  loadTables(moto.url, BUCKET, []);
  s3 = s3Options(moto.url);
});
after(async () => moto?.stop());

const ORDERS = {
  type: 'mor',
  columns: 'order_id STRING NOT NULL, ts BIGINT, region STRING, amount DECIMAL(12,2), placed TIMESTAMP, note STRING',
  recordKey: 'order_id',
  partitionBy: 'region',
  orderingFields: 'ts',
};

const order = (i, ts = 1n, note = `n${i}`) => ({
  order_id: `O-${i}`,
  ts,
  region: i % 2 ? 'eu' : 'us',
  amount: `${i}.50`,
  placed: `2025-01-0${1 + (i % 9)}T08:00:00.000000Z`,
  note,
});

test('create on S3: written and read alike by the package, PyPI hudi and the CLI', async () => {
  const uri = `s3://${BUCKET}/tables/orders`;
  const t = await HudiTable.create(uri, ORDERS, { s3 });
  const info = await t.info();
  assert.equal(info.name, 'orders', 'named after the location');
  assert.equal(info.type, 'MERGE_ON_READ');
  assert.equal(info.timezone, 'UTC');
  assert.equal(info.version, 9);
  assert.deepEqual(await t.rows(), []);

  const first = await t.insert(Array.from({ length: 6 }, (_, i) => order(i)));
  assert.equal(first.inserted, 6);
  const second = await t.upsert([order(1, 5n, 'changed'), order(2, 0n, 'older: loses'), order(9)]);
  assert.deepEqual([second.inserted, second.updated], [1, 2]);
  const gone = await t.delete([{ order_id: 'O-3', region: 'eu', ts: 9n }]);
  assert.equal(gone.deleted, 1);
  const rows = await t.rows();
  t.close();
  const byKey = Object.fromEntries(rows.map((r) => [r.order_id, r]));
  assert.deepEqual(Object.keys(byKey).sort(), ['O-0', 'O-1', 'O-2', 'O-4', 'O-5', 'O-9']);
  assert.equal(byKey['O-1'].note, 'changed');
  assert.equal(byKey['O-2'].note, 'n2', 'event-time ordering: the lower ts lost');
  assert.equal(byKey['O-0'].amount, '0.50');
  assertReadersAgree(moto.url, uri, rows, 'a created table');

  await assert.rejects(HudiTable.create(uri, ORDERS, { s3 }), (e) => e instanceof ConflictError && /already exists/.test(e.message));
  // Two creators of one location: exactly one wins.
  const racing = `s3://${BUCKET}/tables/raced`;
  const outcomes = await Promise.allSettled([HudiTable.create(racing, ORDERS, { s3 }), HudiTable.create(racing, ORDERS, { s3 })]);
  assert.deepEqual(outcomes.map((o) => o.status).sort(), ['fulfilled', 'rejected']);
  assert.ok(outcomes.find((o) => o.status === 'rejected').reason instanceof ConflictError);
  outcomes.filter((o) => o.status === 'fulfilled').forEach((o) => o.value.close());
});

test('created tables keep a metadata table; index() builds one on a table created without', async () => {
  const uri = `s3://${BUCKET}/tables/indexed`;
  const withIndex = { ...ORDERS, options: { 'hoodie.metadata.record.index.enable': 'true' } };
  const t = await HudiTable.create(uri, withIndex, { s3 });
  assert.deepEqual((await t.info()).metadataPartitions.sort(), ['column_stats', 'files', 'partition_stats', 'record_index']);
  await t.insert(Array.from({ length: 8 }, (_, i) => order(i)));
  const plan = await t.plan({ filters: [['order_id', '=', 'O-3']] });
  assert.equal(plan.stats.planningSource, 'metadata_table');
  assert.equal(plan.fileSlices.length, 1, 'the record index finds the one slice');
  assert.deepEqual((await t.rows({ filters: [['order_id', '=', 'O-3']] })).map((r) => r.order_id), ['O-3']);
  t.close();

  const bare = `s3://${BUCKET}/tables/bare`;
  const b = await HudiTable.create(bare, { ...ORDERS, options: { 'hoodie.metadata.enable': 'false' } }, { s3 });
  assert.deepEqual((await b.info()).metadataPartitions, []);
  await b.insert(Array.from({ length: 8 }, (_, i) => order(i)));
  await b.upsert([order(1, 5n, 'changed')]);
  const before = await b.rows();
  const built = await b.index({ partitions: ['record_index'] });
  assert.deepEqual(built.partitions.map((p) => [p.partition, p.instant]), [
    ['files', '00000000000000000'],
    ['column_stats', '00000000000000001'],
    ['record_index', '00000000000000002'],
    ['partition_stats', '00000000000000003'],
  ]);
  assert.equal(built.partitions[2].records, 8);
  assert.ok(built.requests > 0);
  assert.equal(await b.index(), null, 'nothing left to build');
  assert.deepEqual((await b.info()).metadataPartitions.sort(), ['column_stats', 'files', 'partition_stats', 'record_index']);
  assert.equal((await b.plan({ filters: [['order_id', '=', 'O-1']] })).fileSlices.length, 1);
  const byKey = (rows) => [...rows].sort((x, y) => x.order_id.localeCompare(y.order_id));
  const after = await b.rows();
  assert.deepEqual(byKey(after), byKey(before), 'planned from the new metadata table');
  b.close();
  assertReadersAgree(moto.url, bare, after, 'a table indexed later');
});

test('writes archive both timelines on S3; archive() runs it on request with its settings', async () => {
  const uri = `s3://${BUCKET}/tables/archived`;
  const t = await HudiTable.create(uri, ORDERS, { s3 });
  const off = { 'hoodie.archive.automatic': 'false' };
  for (let i = 0; i < 8; i++) await t.upsert([order(i % 4, BigInt(i))], { options: off });
  const small = { 'hoodie.keep.min.commits': '2', 'hoodie.keep.max.commits': '3', 'hoodie.clean.commits.retained': '1' };
  const before = await t.rows();
  const done = await t.archive({ options: small });
  assert.ok(done.dataTable, 'the data timeline was archived');
  assert.ok(done.dataTable.instants.length >= 1 && done.dataTable.historyFile.startsWith('.hoodie/timeline/history/'));
  assert.ok(done.requests > 0);
  const again = await t.archive({ options: small });
  assert.equal(again.dataTable, null, 'nothing more is due');
  await assert.rejects(t.archive({ options: { 'hoodie.keep.min.commits': '9', 'hoodie.keep.max.commits': '3' } }), InvalidArgumentError);
  const byKey = (rows) => [...rows].sort((x, y) => x.order_id.localeCompare(y.order_id));
  const after = await t.rows();
  assert.deepEqual(byKey(after), byKey(before));
  const timeline = await t.timeline({ archived: true });
  const archived = timeline.filter((i) => i.archived).map((i) => i.requestedTime);
  assert.deepEqual(archived, done.dataTable.instants, 'the archived instants read back from the history');
  t.close();
  assertReadersAgree(moto.url, uri, after, 'an archived table');
});

test('clean() on S3 deletes old slices as Hudi does; writes clean after their commit', async () => {
  const uri = `s3://${BUCKET}/tables/cleaned`;
  const t = await HudiTable.create(uri, { ...ORDERS, type: 'cow' }, { s3 });
  const off = { 'hoodie.clean.automatic': 'false' };
  for (let n = 0; n < 5; n++) await t.upsert([order(1, BigInt(n + 1)), order(2, BigInt(n + 1))], { options: off });
  const rows = await t.rows();
  assert.deepEqual(await t.clean(), [], 'the default keeps 10 commits: nothing due');
  const phases = [];
  const done = await t.clean({ options: { 'hoodie.clean.commits.retained': '2' }, onProgress: (p) => phases.push(p.phase) });
  assert.equal(done.length, 1);
  const [c] = done;
  assert.equal(c.table, 'data');
  assert.equal(c.policy, 'KEEP_LATEST_COMMITS');
  assert.equal(c.filesDeleted, 4, 'two file groups, two slices each before the last one kept');
  assert.ok(c.bytesFreed > 0 && c.io.requests > 0);
  assert.equal(phases.at(-1), 'cleaned');
  // Slices' batches come out as their reads finish: compare the rows, not their order.
  const byKey = (rs) => [...rs].sort((x, y) => x.order_id.localeCompare(y.order_id));
  assert.deepEqual(byKey(await t.rows()), byKey(rows), 'the snapshot reads the same');
  const w = await t.upsert([order(1, 9n, 'after')], { options: { 'hoodie.clean.commits.retained': '2' } });
  assert.equal(w.cleans.length, 1, 'the write cleaned after its commit');
  assert.deepEqual(w.serviceErrors, []);
  const after = await t.rows();
  t.close();
  assertReadersAgree(moto.url, uri, after, 'a cleaned table');
});

test('create over a storage object from an apache-arrow Schema of another copy of apache-arrow', async () => {
  const arrow17 = await import('apache-arrow-17');
  const schema = new arrow17.Schema([
    new arrow17.Field('id', new arrow17.Int64(), false),
    new arrow17.Field('name', new arrow17.Utf8(), true),
    new arrow17.Field('score', new arrow17.Float64(), true),
    new arrow17.Field('day', new arrow17.DateDay(), true),
  ]);
  const dir = join(tempDir('pkg-create'), 'events');
  const t = await HudiTable.createStorage(fsStorage(dir), { name: 'events', columns: schema, recordKey: ['id'] });
  const props = readFileSync(join(dir, '.hoodie', 'hoodie.properties'), 'utf8');
  assert.match(props, /hoodie.table.keygenerator.type=NON_PARTITION/);
  assert.match(props, /hoodie.record.merge.mode=COMMIT_TIME_ORDERING/);
  const r = await t.insert([{ id: 1n, name: 'a', score: 0.5, day: '2025-02-03' }, { id: 2n, name: null, score: null, day: null }]);
  assert.equal(r.inserted, 2);
  const rows = await t.rows();
  assert.deepEqual(rows.map(({ id, name, score, day }) => ({ id, name, score, day })).sort((a, b) => a.id - b.id), [
    { id: 1, name: 'a', score: 0.5, day: '2025-02-03' },
    { id: 2, name: null, score: null, day: null },
  ]);
  // The first commit carries the schema the table was created with.
  const { schema: written } = await t.commit(r.instant);
  assert.deepEqual(written.map((f) => [f.name, f.nullable]), [['id', false], ['name', true], ['score', true], ['day', true]]);
  t.close();
});

test('addColumns: typed columns of an apache-arrow Table join the schema; unasked or from plain objects they are refused', async () => {
  const uri = `s3://${BUCKET}/tables/widening`;
  const t = await HudiTable.create(uri, ORDERS, { s3 });
  await t.insert([order(1), order(2)]);
  const text = (values) => vectorFromArray(values, new Utf8());
  const wider = new Table({
    order_id: text(['O-1', 'O-7']),
    ts: vectorFromArray([5n, 5n], new Int64()),
    region: text(['eu', 'eu']),
    amount: text(['1.25', '7.00']),
    placed: text(['2025-02-01T08:00:00.000000Z', '2025-02-01T09:00:00.000000Z']),
    note: text(['wider', 'new']),
    channel: text(['web', null]),
    qty: vectorFromArray([3, 4], new Int32()),
  });
  await assert.rejects(t.upsert(wider), (e) => e instanceof InvalidInputError && /"channel" is not in the table's schema/.test(e.message));
  await assert.rejects(t.upsert([{ ...order(1), channel: 'web' }], { addColumns: true }), (e) => e instanceof InvalidInputError && e.column === 'channel' && /plain objects cannot add columns/.test(e.message));
  const r = await t.upsert(wider, { addColumns: true });
  assert.deepEqual([r.inserted, r.updated], [1, 1]);
  const { schema } = await t.commit(r.instant);
  assert.deepEqual(schema.slice(-2).map((f) => [f.name, f.nullable]), [['channel', true], ['qty', true]]);
  // Now table columns, so plain objects may set them.
  await t.upsert([{ ...order(2, 9n), channel: 'app', qty: 1 }]);
  const rows = await t.rows();
  t.close();
  const byKey = Object.fromEntries(rows.map((r) => [r.order_id, [r.channel, r.qty, r.note]]));
  assert.deepEqual(byKey, { 'O-1': ['web', 3, 'wider'], 'O-2': ['app', 1, 'n2'], 'O-7': [null, 4, 'new'] });
  assertReadersAgree(moto.url, uri, rows, 'columns added by the package');
});

test('create: bad specs are typed errors before any request', async () => {
  const dir = join(tempDir('pkg-create'), 'bad');
  const storage = fsStorage(dir);
  const refused = (spec, type, pattern) =>
    assert.rejects(HudiTable.createStorage(storage, spec), (e) => e instanceof type && pattern.test(e.message));
  await refused({ columns: 'id STRING', recordKey: 'nope' }, InvalidArgumentError, /record key field "nope" is not a column/);
  await refused({ columns: 'id STRING', recordKey: [] }, InvalidArgumentError, /record key/);
  await refused({ columns: 'id STRING,', recordKey: 'id' }, InvalidArgumentError, /table schema/);
  await refused({ columns: 'id STRING', recordKey: 'id', type: 'hash' }, InvalidArgumentError, /table type/);
  await refused({ columns: { not: 'a schema' }, recordKey: 'id' }, InvalidArgumentError, /columns/);
  await refused({ columns: 'id STRING', recordKey: 'id', options: { 'hoodie.bootstrap.base.path': '/elsewhere' } }, UnsupportedError, /hoodie.bootstrap.base.path/);
  await refused({ columns: 'id STRING', recordKey: 'id', precombine: 'ts' }, InvalidArgumentError, /precombine/);
  assert.ok(!existsSync(join(dir, '.hoodie')), 'nothing written');
  await assert.rejects(HudiTable.create('https://example.com/tables/t', { columns: 'id STRING', recordKey: 'id' }), ReadOnlyError);
});

test('clustering: cluster() rewrites small file groups into one per partition; inline after a write', async () => {
  const uri = `s3://${BUCKET}/tables/clustered`;
  const t = await HudiTable.create(uri, ORDERS, { s3 });
  // Every insert opens a new file group; logs stay uncompacted.
  const small = { 'hoodie.parquet.small.file.limit': '0', 'hoodie.compact.inline': 'false' };
  for (let i = 0; i < 4; i++) await t.upsert([order(10 + i, 1n, `w${i}`), order(i, BigInt(i + 1), `u${i}`)], { options: small });
  const byKey = (rows) => rows.map((r) => `${r.order_id} ${r.note} ${r.ts} ${r._hoodie_commit_time}`).sort();
  const before = byKey(await t.rows());
  const planned = await t.cluster({ scheduleOnly: true });
  assert.ok(planned.scheduled, JSON.stringify(planned));
  assert.deepEqual(planned.completed, []);
  const executed = await t.cluster({ instant: planned.scheduled });
  assert.deepEqual(executed.completed.map((d) => d.instant), [planned.scheduled]);
  const [done] = executed.completed;
  assert.equal(done.groups, 2, 'one group per partition');
  assert.equal(done.filesWritten.length, 2);
  assert.ok(done.fileGroupsReplaced.length > 2, JSON.stringify(done));
  assert.deepEqual(byKey(await t.rows()), before, 'the same rows, commit times kept');
  // Inline: after a write, when due (here every commit).
  const r = await t.upsert([order(30, 1n, 'inline')], {
    options: { ...small, 'hoodie.clustering.inline': 'true', 'hoodie.clustering.inline.max.commits': '1' },
  });
  assert.deepEqual(r.serviceErrors, []);
  assert.equal(r.clustering.completed.length, 1, JSON.stringify(r.clustering));
  const rows = await t.rows();
  t.close();
  assert.equal(rows.find((x) => x.order_id === 'O-30').note, 'inline');
  assertReadersAgree(moto.url, uri, rows, 'a clustered table');
});

test('Merge-On-Read compaction: inline after the fifth delta commit, compact() on request', async () => {
  const uri = `s3://${BUCKET}/tables/compacted`;
  const t = await HudiTable.create(uri, ORDERS, { s3 });
  const results = [];
  for (let i = 0; i < 5; i++) {
    results.push(await t.upsert([order(i, BigInt(i + 1), `w${i}`), order(i + 1, BigInt(i + 1), `w${i}`)]));
  }
  assert.deepEqual(results.slice(0, 4).map((r) => r.compaction ?? null), [null, null, null, null]);
  const c = results[4].compaction;
  assert.deepEqual(results[4].serviceErrors, []);
  assert.equal(c.completed.length, 1, 'compacted after the fifth delta commit');
  const [done] = c.completed;
  assert.ok(done.fileGroups > 0 && done.filesWritten.length === done.fileGroups);
  assert.ok(done.filesWritten.every((f) => f.endsWith(`_${done.instant}.parquet`)), 'new base files at the compaction instant');
  const byKey = (rows) => rows.map((r) => `${r.order_id} ${r.note} ${r.ts}`).sort();
  assert.deepEqual(byKey(await t.rows({ query: 'read_optimized' })), byKey(await t.rows()), 'base files alone hold the snapshot');

  // On request: a plan left for later, then executed by instant; then nothing is left.
  await t.upsert([order(1, 100n, 'after')], { options: { 'hoodie.compact.inline': 'false' } });
  const planned = await t.compact({ scheduleOnly: true });
  assert.ok(planned.scheduled, JSON.stringify(planned));
  assert.deepEqual(planned.completed, []);
  const executed = await t.compact({ instant: planned.scheduled });
  assert.deepEqual(executed.completed.map((d) => d.instant), [planned.scheduled]);
  const nothing = await t.compact();
  assert.deepEqual(nothing.completed, []);
  assert.ok(nothing.notScheduled);
  const rows = await t.rows();
  t.close();
  assert.equal(rows.find((r) => r.order_id === 'O-1').note, 'after');
  assertReadersAgree(moto.url, uri, rows, 'a compacted table');
});
