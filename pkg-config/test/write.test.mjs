// `table.write`: plain objects and an apache-arrow Table into a copy of a fixture table over a
// storage object with put/delete (node:fs); the table shows the commits; typed errors for a
// read-only table and for rows that do not fit.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { cpSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { tableFromArrays } from 'apache-arrow';
import { HudiTable, InvalidInputError, UnsupportedError, InvalidArgumentError } from 'hudi-edge';
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
  await assert.rejects(zip.write([{ txn_id: 'X', region: 'us', txn_ts: 1 }], { operation: 'upsert' }), (e) => e instanceof UnsupportedError && e.code === 'UNSUPPORTED');
  assert.equal(zip.io().puts, 0);

  const t = await HudiTable.openStorage(fsStorage(copy(COW)));
  const fails = (rows) => assert.rejects(t.write(rows, { operation: 'upsert' }), (e) => e instanceof InvalidInputError && e.code === 'INVALID_INPUT');
  await fails([{ txn_id: 'X', region: 'us', txn_ts: 1, no_such_column: 1 }]);
  await fails([]);
  await fails([{ txn_id: 'X', region: 'us', txn_ts: Symbol('no') }]);
  await assert.rejects(t.write({ not: 'rows' }, { operation: 'upsert' }), InvalidArgumentError);
  assert.equal(t.io().puts, 0);
});
