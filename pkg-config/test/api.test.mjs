// Every API call against real tables over a loopback nginx, checked against the fixtures'
// expected results (written by an independent reader, see tests/data/fixtures/README.md).
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { RecordBatch, Table } from 'apache-arrow';
import { HudiTable } from 'hudi-edge';
import { V6, V9, V9_MOR, expected, keysWithPartition, sameRows, useNginx } from './helpers.mjs';

const server = useNginx();

for (const name of [V6, V9, V9_MOR]) {
  describe(name, () => {
    let table;
    let exp;
    const open = async () => {
      exp ??= await expected(name);
      table ??= await HudiTable.open(`${server.url}/tables/${name}/`);
      return table;
    };

    test('open: the location has no trailing secrets and io counts the open', async () => {
      const t = await open();
      assert.equal(t.location, `${server.url}/tables/${name}`);
      const io = t.io();
      assert.ok(io.requests >= 2 && io.lists >= 1 && io.gets >= 1, JSON.stringify(io));
    });

    test('info: version, type, name, keys, partitions, metadata-table partitions, properties', async () => {
      const t = await open();
      const info = await t.info();
      assert.equal(info.version, exp.table.table_version);
      assert.equal(info.type, exp.table.table_type);
      assert.equal(info.name, exp.table.name);
      assert.deepEqual(info.recordKeyFields, exp.table.record_key_fields);
      assert.deepEqual(info.partitionFields, exp.table.partition_fields);
      const ordering = exp.table.ordering_fields ?? exp.table.precombine_field;
      if (ordering) assert.deepEqual(info.orderingFields, String(ordering).split(','));
      const partitions = new Set(exp.snapshot_file_slices.map((s) => s.partition_path));
      assert.equal(info.partitionCount, partitions.size);
      assert.equal(info.fileGroupCount, exp.snapshot_file_slices.length);
      assert.ok(info.totalBytes > 0);
      assert.deepEqual(info.metadataPartitions, exp.table.metadata_partitions_property ?? []);
      assert.equal(info.properties['hoodie.table.name'], exp.table.name);
    });

    test('timeline: exactly the completed instants, with actions and operations', async () => {
      const t = await open();
      const instants = await t.timeline();
      const completed = instants.filter((i) => i.state === 'completed');
      assert.deepEqual(
        completed.map((i) => [i.requestedTime, i.action]),
        exp.timeline_folder.completed.map((c) => [c.instant_time, c.action]),
      );
      if (exp.table.table_version >= 8) {
        assert.deepEqual(completed.map((i) => i.completionTime), exp.timeline_folder.completed.map((c) => c.completion_time));
      }
      assert.deepEqual(instants.filter((i) => i.state !== 'completed').map((i) => i.requestedTime), (exp.timeline_folder.pending ?? []).map((p) => p.instant_time ?? p));
      const ops = new Map(exp.commit_metadata.map((c) => [c.instant_time, c.operationType]));
      for (const i of completed) if (ops.has(i.requestedTime)) assert.equal(i.operation, ops.get(i.requestedTime), i.requestedTime);
      assert.ok(instants.every((i) => i.archived === false));
      const bare = await t.timeline({ operations: false });
      assert.ok(bare.every((i) => i.operation === null));
    });

    test('commit: files written, record counts and replaced file groups of every commit', async () => {
      const t = await open();
      for (const c of exp.commit_metadata) {
        const d = await t.commit(c.instant_time);
        assert.equal(d.instant.requestedTime, c.instant_time);
        assert.equal(d.operation, c.operationType);
        assert.deepEqual(d.files.map((f) => f.path).sort(), [...c.files_written].sort(), c.instant_time);
        assert.equal(d.inserts, c.write_totals.numInserts);
        assert.equal(d.updates, c.write_totals.numUpdateWrites);
        assert.equal(d.deletes, c.write_totals.numDeletes);
        assert.equal(d.writes, c.write_totals.numWrites);
        const replaced = Object.entries(c.replaced_file_ids ?? {}).flatMap(([p, ids]) => ids.map((id) => `${p}/${id}`)).sort();
        assert.deepEqual(d.replacedFileGroups.map((r) => `${r.partition}/${r.fileId}`).sort(), replaced);
        assert.ok(d.bytes > 0 || d.files.length === 0);
        assert.ok(d.files.every((f) => f.kind === (/\.log\.\d+/.test(f.path) ? 'log' : 'base')));
        assert.ok(d.schema?.some((f) => f.name === exp.table.record_key_fields[0]), 'schema fields');
      }
      await assert.rejects(t.commit('20000101000000000'), { code: 'NOT_FOUND' });
    });

    test('fileGroups: the latest file slices, and slices as of the first commit', async () => {
      const t = await open();
      const layout = await t.fileGroups();
      const latest = layout.partitions.flatMap((p) =>
        p.fileGroups.map((g) => {
          const s = g.slices.at(-1);
          return [p.partition, g.fileId, s.baseFile?.name ?? null, s.logFiles.map((l) => l.name)];
        }),
      );
      const want = exp.snapshot_file_slices.map((s) => [s.partition_path, s.file_id, s.base_file_name, s.log_file_names]);
      assert.deepEqual(latest.sort(), want.sort());
      for (const p of layout.partitions) for (const g of p.fileGroups) for (const s of g.slices) assert.equal(s.size, (s.baseFile?.size ?? 0) + s.logFiles.reduce((n, l) => n + l.size, 0));
      const first = exp.commit_metadata[0];
      const old = await t.fileGroups({ asOf: first.instant_time });
      const oldFiles = old.partitions.flatMap((p) => p.fileGroups.map((g) => `${p.partition}/${g.slices.at(-1).baseFile?.name}`));
      assert.deepEqual(oldFiles.sort(), first.files_written.filter((f) => !/\.log\./.test(f)).sort());
    });

    test('plan: a partition filter selects that partition\'s slices; stats and io', async () => {
      const t = await open();
      const f = exp.filters.find((x) => x.kind === 'partition_eq');
      const info0 = await t.info();
      const all = await t.plan();
      assert.equal(all.fileSlices.length, exp.snapshot_file_slices.length);
      assert.equal(all.stats.filesSelected, exp.snapshot_file_slices.length);
      const plan = await t.plan({ filters: f.filters });
      const partitionOf = (p) => p.split('/').map((s) => s.split('=').at(-1));
      const want = exp.snapshot_file_slices.filter((s) => partitionOf(s.partition_path)[0] === String(f.filters[0][2]));
      assert.deepEqual(plan.fileSlices.map((s) => s.fileId).sort(), want.map((s) => s.file_id).sort());
      assert.equal(plan.stats.filesSelected, want.length);
      assert.ok(plan.stats.partitionsAfterPruning < plan.stats.partitionsTotal);
      assert.equal(plan.stats.filesTotal, all.stats.filesTotal);
      assert.equal(plan.query, 'snapshot');
      assert.equal(typeof plan.timeMs, 'number');
      // Planning may cost nothing (a manifest listing, commits read by the open, the session
      // cache); a filter on a partitioned table without the metadata table reads footers.
      for (const p of [all, plan]) assert.ok(Number.isInteger(p.io.requests) && p.io.requests >= 0 && p.io.bytes >= 0);
      if (!info0.metadataPartitions.length) assert.ok(plan.io.requests >= 1, 'footers read for row-group stats');
    });

    test('read: an apache-arrow Table with the snapshot', async () => {
      const t = await open();
      const at = await t.read();
      assert.ok(at instanceof Table);
      assert.equal(at.numRows, exp.snapshot.row_count);
      assert.deepEqual(at.schema.fields.map((f) => f.name), exp.snapshot.schema.map((f) => f.name));
      const cols = await t.read({ columns: [exp.table.record_key_fields[0]], limit: 2 });
      assert.equal(cols.numRows, Math.min(2, exp.snapshot.row_count));
      assert.deepEqual(cols.schema.fields.map((f) => f.name), [exp.table.record_key_fields[0]]);
    });

    test('stream: RecordBatches adding up to the snapshot; breaking out early', async () => {
      const t = await open();
      let rows = 0;
      const keys = [];
      for await (const batch of t.stream({ batchSize: 3 })) {
        assert.ok(batch instanceof RecordBatch);
        rows += batch.numRows;
        for (const k of batch.getChild('_hoodie_record_key') ?? []) keys.push(k);
      }
      assert.equal(rows, exp.snapshot.row_count);
      if (exp.table.populate_meta_fields !== false) assert.deepEqual(keys.sort(), [...exp.snapshot.record_keys].sort());
      for await (const batch of t.stream()) {
        assert.ok(batch.numRows > 0);
        break;
      }
    });

    test('rows: snapshot, time travel, incremental and filters match the expected rows', async () => {
      const t = await open();
      assert.deepEqual(...sameRows(await t.rows(), exp, exp.snapshot.rows));
      for (const tt of exp.time_travel) assert.deepEqual(...sameRows(await t.rows({ asOf: tt.as_of }), exp, tt.rows), `as of ${tt.as_of}`);
      const ranges = exp.table.table_version >= 8 ? exp.incremental_by_completion_time : exp.incremental;
      for (const r of ranges) {
        const got = await t.rows({ query: 'incremental', start: r.start, ...(r.end ? { end: r.end } : {}) });
        assert.deepEqual(keysWithPartition(got), [...r.keys_with_partition].sort(), `incremental (${r.start}, ${r.end}]`);
      }
      for (const f of exp.filters) {
        const got = await t.rows({ filters: f.filters });
        assert.deepEqual(keysWithPartition(got), f.python_filter_of_snapshot_keys.map(([k, p]) => [k, p]).sort(), JSON.stringify(f.filters));
      }
      if (exp.read_optimized) assert.deepEqual(...sameRows(await t.rows({ query: 'read_optimized' }), exp, exp.read_optimized.rows));
      const limited = await t.rows({ limit: 1, columns: ['_hoodie_record_key'] });
      assert.equal(limited.length, 1);
      assert.deepEqual(Object.keys(limited[0]), ['_hoodie_record_key']);
    });
  });
}

test('string filters and combined filters', async () => {
  const t = await HudiTable.open(`${server.url}/tables/${V9}/`);
  const a = await t.rows({ filters: ["region = 'us'", ['txn_type', '=', 'debit']] });
  const b = await t.rows({ filters: ["region = 'us' and txn_type = 'debit'"] });
  assert.ok(a.length > 0);
  assert.deepEqual(keysWithPartition(a), keysWithPartition(b));
  assert.ok(a.every((r) => r.region === 'us' && r.txn_type === 'debit'));
  const inList = await t.rows({ filters: [['region', 'in', ['us', 'eu']]] });
  assert.ok(inList.every((r) => ['us', 'eu'].includes(r.region)));
  t.close();
});

test('archived timeline: v6 archive and v9 LSM history', async () => {
  for (const name of ['v6_archive_cow', 'v9_archive_mor']) {
    const t = await HudiTable.open(`${server.url}/generated/${name}/`);
    const active = await t.timeline({ operations: false });
    const all = await t.timeline({ archived: true });
    const archived = all.filter((i) => i.archived);
    assert.ok(archived.length > 0, `${name}: archived instants`);
    assert.equal(all.length, archived.length + active.length);
    const first = await t.commit(archived[0].requestedTime);
    assert.ok(first.instant.archived && first.files.length > 0);
    assert.ok(archived.filter((i) => ['commit', 'deltacommit'].includes(i.action)).every((i) => i.operation));
    t.close();
  }
});
