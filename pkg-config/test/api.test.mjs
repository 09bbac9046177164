// Every API call against real tables over a loopback nginx, checked against the fixtures'
// expected results (written by an independent reader, see tests/data/fixtures/README.md).
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { RecordBatch, Table } from 'apache-arrow';
import { HudiTable } from 'hudi-edge';
import { V6, V9, V9_MOR, expected, oracleEncoding, sameRows, useNginx } from './helpers.mjs';
import { expectedReads, sameRows as sameOracleRows } from '../../tests/js/fixture_checks.mjs';
import { allowances } from '../../tests/js/expected.mjs';

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
        assert.equal(d.inserted, c.write_totals.numInserts);
        assert.equal(d.updated, c.write_totals.numUpdateWrites);
        assert.equal(d.deleted, c.write_totals.numDeletes);
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
      const before = t.io();
      const all = await t.plan();
      const between = t.io();
      assert.equal(all.fileSlices.length, exp.snapshot_file_slices.length);
      assert.equal(all.stats.filesSelected, exp.snapshot_file_slices.length);
      const plan = await t.plan({ filters: f.filters });
      const after = t.io();
      const partitionOf = (p) => p.split('/').map((s) => s.split('=').at(-1));
      const want = exp.snapshot_file_slices.filter((s) => partitionOf(s.partition_path)[0] === String(f.filters[0][2]));
      assert.deepEqual(plan.fileSlices.map((s) => s.fileId).sort(), want.map((s) => s.file_id).sort());
      assert.equal(plan.stats.filesSelected, want.length);
      assert.ok(plan.stats.partitionsAfterPruning < plan.stats.partitionsTotal);
      assert.equal(plan.stats.filesTotal, all.stats.filesTotal);
      assert.equal(plan.query, 'snapshot');
      assert.equal(typeof plan.timeMs, 'number');
      // A plan's io is exactly what the table's counters moved by while it ran (it may be
      // nothing: a manifest listing, commits read by the open, the session cache); a filter
      // on partition columns alone prunes by the paths, so it reads no footer (file
      // statistics hold the files' values, which reads do not show for partition columns).
      assert.equal(all.io.requests, between.requests - before.requests, 'plan io = table io moved');
      assert.equal(all.io.bytes, between.bytes - before.bytes, 'plan io bytes = table io moved');
      assert.equal(plan.io.requests, after.requests - between.requests, 'filtered plan io = table io moved');
      assert.equal(plan.io.bytes, after.bytes - between.bytes, 'filtered plan io bytes = table io moved');
      const footers = Object.entries(plan.io.byPurpose ?? {}).filter(([k]) => /footer/i.test(k));
      assert.deepEqual(footers.map(([, v]) => v.requests).filter((n) => n > 0), [], 'no footer read');
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

    test('rows: every expected read (snapshot, time travel, incremental, read-optimized, filters), row for row', async () => {
      const t = await open();
      // The same reads and rows as the native and wasm fixture checks (tests/js/fixture_checks.mjs).
      const reads = expectedReads(allowances, name, exp);
      assert.ok(reads.some((r) => r.options.query === 'incremental') && reads.some((r) => r.options.filters), 'incremental and filtered reads are covered');
      for (const read of reads) {
        if (read.want.error) {
          await assert.rejects(t.rows(read.options), { code: read.want.error.code }, read.what);
          continue;
        }
        const got = oracleEncoding(await t.rows(read.options), exp.snapshot.schema);
        sameOracleRows(name, exp, got, read.want.rows, read.what, read.want.int64AsString);
      }
      const limited = await t.rows({ limit: 1, columns: ['_hoodie_record_key'] });
      assert.equal(limited.length, 1);
      assert.deepEqual(Object.keys(limited[0]), ['_hoodie_record_key']);
    });
  });
}

test('string filters and combined filters', async () => {
  const t = await HudiTable.open(`${server.url}/tables/${V9}/`);
  const exp = await expected(V9);
  // The expected rows: the predicate applied to the oracle's snapshot rows.
  const want = (keep) => exp.snapshot.rows.filter(keep);
  const a = await t.rows({ filters: ["region = 'us'", ['txn_type', '=', 'debit']] });
  const b = await t.rows({ filters: ["region = 'us' and txn_type = 'debit'"] });
  const usDebit = want((r) => r.region === 'us' && r.txn_type === 'debit');
  assert.ok(usDebit.length > 0 && usDebit.length < exp.snapshot.rows.length, 'the filter keeps some rows and drops some');
  assert.deepEqual(...sameRows(a, exp, usDebit));
  assert.deepEqual(...sameRows(b, exp, usDebit));
  const inList = await t.rows({ filters: [['region', 'in', ['us', 'eu']]] });
  const usEu = want((r) => ['us', 'eu'].includes(r.region));
  assert.ok(usEu.length > 0 && usEu.length < exp.snapshot.rows.length, 'the in-list keeps some rows and drops some');
  assert.deepEqual(...sameRows(inList, exp, usEu));
  // A `Date` is taken as its ISO-8601 time, in filters (timestamp and date columns) and `asOf`;
  // handed to the engine as it is, it arrived as `{}` and was refused.
  const since = new Date('2024-01-20T00:00:00Z');
  const byDate = await t.rows({ filters: [['txn_datetime', '>=', since], ['txn_date', 'in', [since, new Date('2024-01-21T00:00:00Z')]]] });
  const byText = await t.rows({ filters: [['txn_datetime', '>=', '2024-01-20T00:00:00Z'], ['txn_date', 'in', ['2024-01-20', '2024-01-21']]] });
  assert.ok(byText.length > 0 && byText.length < exp.snapshot.rows.length, 'the filter keeps some rows and drops some');
  const byKey = (rows) => rows.sort((x, y) => (x._hoodie_record_key < y._hoodie_record_key ? -1 : 1));
  assert.deepEqual(byKey(byDate), byKey(byText));
  assert.equal((await t.rows({ asOf: new Date() })).length, exp.snapshot.rows.length);
  t.close();
});

test('archived timeline: v6 archive and v9 LSM history', async () => {
  for (const name of ['v6_archive_cow', 'v9_archive_mor']) {
    const t = await HudiTable.open(`${server.url}/generated/${name}/`);
    const active = await t.timeline({ operations: false });
    const all = await t.timeline({ archived: true });
    const archived = all.filter((i) => i.archived);
    assert.equal(all.length, archived.length + active.length);
    // Exactly the instants Hudi Spark itself read back, archived ones included.
    const hudi = JSON.parse(readFileSync(new URL(`../../tests/data/generated/${name}.json`, import.meta.url), 'utf8'));
    // Table version 6 has no completion times in Hudi (the package shows the file's time).
    const v9 = hudi.table_version >= 8;
    assert.deepEqual(
      all.filter((i) => i.state === 'completed').map((i) => [i.requestedTime, i.action, v9 ? i.completionTime : null, i.archived]),
      hudi.completed_instants.map((c) => [c.requested_time, c.action, v9 ? c.completion_time : null, c.timeline === 'archived']),
      `${name}: completed instants`,
    );
    assert.ok(archived.length > 0, `${name}: archived instants`);
    const first = await t.commit(archived[0].requestedTime);
    assert.ok(first.instant.archived && first.files.length > 0);
    assert.ok(archived.filter((i) => ['commit', 'deltacommit'].includes(i.action)).every((i) => i.operation));
    t.close();
  }
});
