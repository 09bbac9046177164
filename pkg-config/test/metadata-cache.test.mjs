// MetadataCache: metadata-table files kept across table handles. Against moto's S3: a second
// open + upsert of the MOR table (record index) with the same cache makes far fewer MDT
// requests than the first; after another writer's commit that compacts the metadata table
// (no cache) the cached writer still
// finds that writer's keys (updates, not second inserts), and the package, PyPI `hudi` and the
// CLI read the same rows.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { HudiTable, MetadataCache, InvalidArgumentError, DEFAULT_METADATA_CACHE_BYTES } from 'hudi-edge';
import { cpSync } from 'node:fs';
import { join } from 'node:path';
import { startMoto, unzippedFixtures } from '../../tests/web/lib/servers.mjs';
import { fsStorage } from '../../tests/js/fs_storage.mjs';
import { tempDir } from '../../tests/lib/harness.mjs';
import { WRITE_TABLES, assertReadersAgree, loadTables, s3Options, txnRows } from '../../tests/web/lib/writes.mjs';

const BUCKET = 'pkg-mdt-cache';
const uri = `s3://${BUCKET}/${WRITE_TABLES.mor}`;
let moto;
let s3;

before(async () => {
  moto = await startMoto();
  loadTables(moto.url, BUCKET, [WRITE_TABLES.mor]);
  s3 = s3Options(moto.url);
});
after(async () => moto?.stop());

/** Metadata-table requests (HFile index and data blocks, log files) of a handle so far. */
const mdtRequests = (io) => ['mdt_index_block', 'mdt_data_block'].reduce((n, p) => n + (io.byPurpose?.[p]?.requests ?? 0), 0);

/** Opens the table (with `cache` when given), upserts `rows` (the metadata table compacting
 *  after `maxDelta` delta commits), closes; the result and the handle's io. */
async function upsert(rows, cache, maxDelta = 100) {
  const t = await HudiTable.open(uri, { s3, ...(cache ? { cache } : {}) });
  const r = await t.upsert(rows, { options: { 'hoodie.metadata.compact.max.delta.commits': String(maxDelta) } });
  const io = t.io();
  t.close();
  return { r, io };
}

test('a cache shared by opens: fewer MDT requests, exact across another writer', async () => {
  const cache = new MetadataCache();
  assert.equal(cache.maxBytes, DEFAULT_METADATA_CACHE_BYTES);
  assert.equal(cache.stats().bytes, 0);

  const cold = await upsert(txnRows('mor', 5, { prefix: 'CACHE' }), cache);
  assert.deepEqual([cold.r.inserted, cold.r.updated], [5, 0]);
  const afterCold = cache.stats();
  assert.ok(afterCold.bytes > 0 && afterCold.files > 0, JSON.stringify(afterCold));
  assert.ok(afterCold.written > 0, `the writer kept its own MDT log files: ${JSON.stringify(afterCold)}`);
  assert.ok(afterCold.bytes <= afterCold.maxBytes);

  const warm = await upsert(txnRows('mor', 5, { prefix: 'CACHE', version: 1 }), cache);
  assert.deepEqual([warm.r.inserted, warm.r.updated], [0, 5]);
  const [c, w] = [mdtRequests(cold.io), mdtRequests(warm.io)];
  console.log(`MDT requests: cold ${c}, warm ${w}; cache ${JSON.stringify(cache.stats())}`);
  assert.ok(c >= 10, `cold ${c}`);
  assert.ok(w * 4 <= c, `warm ${w} vs cold ${c}`);
  assert.ok(cache.stats().hits > afterCold.hits);

  // Another writer (no cache) inserts keys and compacts the metadata table (new base files,
  // the slices the cache holds superseded); the cached writer then upserts them: updates.
  const other = await upsert(txnRows('mor', 3, { prefix: 'OTHER' }), undefined, 1);
  assert.equal(other.r.inserted, 3);
  assert.ok(other.r.metadataTableCompaction, 'the other writer compacted the metadata table');
  const again = await upsert([...txnRows('mor', 3, { prefix: 'OTHER', version: 2 }), ...txnRows('mor', 2, { prefix: 'CACHE', version: 2 })], cache);
  assert.deepEqual([again.r.inserted, again.r.updated], [0, 5], 'keys of the other writer and of this one are updates');

  const t = await HudiTable.open(uri, { s3, cache });
  const rows = await t.rows();
  t.close();
  assert.equal(rows.filter((r) => /^(CACHE|OTHER)-/.test(r.txn_id)).length, 8);
  assert.equal(rows.find((r) => r.txn_id === 'OTHER-00000').merchant_name, 'merchant 0 v2');
  assert.equal(rows.find((r) => r.txn_id === 'CACHE-00004').merchant_name, 'merchant 4 v1');
  assertReadersAgree(moto.url, uri, rows, 'after cached and uncached writes');
});

test('a cache of 0 bytes keeps nothing; a bad budget is refused', async () => {
  const none = new MetadataCache({ maxBytes: 0 });
  const t = await HudiTable.open(uri, { s3, cache: none });
  assert.ok((await t.rows()).length > 0);
  t.close();
  assert.equal(none.stats().bytes, 0);
  assert.throws(() => new MetadataCache({ maxBytes: -1 }), InvalidArgumentError);
  assert.throws(() => new MetadataCache({ maxBytes: 1.5 }), InvalidArgumentError);
});

test('openStorage takes the cache too (a storage object with ETags, e.g. over an R2 binding)', async () => {
  const root = join(tempDir('pkg-mdt-cache'), 't');
  cpSync(join(unzippedFixtures(), 'tables', WRITE_TABLES.mor), root, { recursive: true });
  const cache = new MetadataCache();
  const options = { options: { 'hoodie.metadata.compact.max.delta.commits': '100' } };
  const ios = [];
  for (const version of [0, 1, 2]) {
    const t = await HudiTable.openStorage(fsStorage(root, { etags: true }), { cache });
    const r = await t.upsert(txnRows('mor', 4, { prefix: 'STORE', version }), options);
    assert.deepEqual([r.inserted, r.updated], version ? [0, 4] : [4, 0]);
    ios.push(mdtRequests(t.io()));
    t.close();
  }
  console.log(`openStorage MDT requests: ${ios.join(', ')}`);
  assert.ok(ios[0] >= 10 && ios[2] * 4 <= ios[0], ios.join());
  const t = await HudiTable.openStorage(fsStorage(root));
  const rows = (await t.rows()).filter((r) => r.txn_id.startsWith('STORE-'));
  t.close();
  assert.deepEqual(rows.map((r) => r.merchant_name).sort(), ['merchant 0 v2', 'merchant 1 v2', 'merchant 2 v2', 'merchant 3 v2']);
});
