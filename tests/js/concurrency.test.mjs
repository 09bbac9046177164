// Multi-writer options through the wasm build in Node: over a JS storage that gives no
// ETags (conditional updates impossible) concurrent writing is refused UNSUPPORTED, naming
// the lock object, and no lock is left behind; the same storage still takes single-writer
// commits. Java's lock settings are checked before any request (a 60 s validity with the
// default 30 s renewal is refused as Java refuses it).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { join, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createRequire } from 'node:module';
import { tableFromJSON, tableToIPC } from 'apache-arrow';
import { fsStorage } from './fs_storage.mjs';
import { tableCopy } from '../lib/fixtures.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const repo = join(here, '..', '..');
const fixtures = process.env.HUDI_EDGE_FIXTURES ?? join(repo, 'tests', 'data', 'fixtures');
const wasmDir = process.env.HUDI_EDGE_WASM_NODE ?? join(process.env.CARGO_TARGET_DIR ?? join(repo, 'target'), 'wasm-node');
const require = createRequire(import.meta.url);
const { WasmTable } = require(join(wasmDir, 'hudi_edge.js'));

const OCC = {
  'hoodie.write.concurrency.mode': 'optimistic_concurrency_control',
  'hoodie.write.lock.provider': 'org.apache.hudi.client.transaction.lock.StorageBasedLockProvider',
};

const copy = (name) => tableCopy(name, 'occ');

test('a store without ETags refuses concurrent writing and leaves no lock', async () => {
  const root = copy('sample_table/cow/v9_txns_simple_nometa');
  const table = await WasmTable.openJs(fsStorage(root));
  const [row] = await table.readJson({ limit: 1 }, false);
  const data = Object.fromEntries(Object.entries(row).filter(([k]) => !k.startsWith('_hoodie_')));
  const rows = tableToIPC(tableFromJSON([{ ...data, txn_id: 'OCC-1' }]), 'stream');
  await assert.rejects(table.write(rows, { operation: 'upsert', options: OCC, commitRetries: 2 }), (e) => {
    assert.equal(e.code, 'UNSUPPORTED', e.message);
    assert.match(e.message, /table_lock\.json/);
    assert.match(e.message, /ETag/);
    return true;
  });
  assert.equal(existsSync(join(root, '.hoodie', '.locks', 'table_lock.json')), false);
  // Java's rule: validity >= 10 x the renew interval (30 s by default).
  await assert.rejects(
    table.write(rows, { operation: 'upsert', options: { ...OCC, 'hoodie.write.lock.storage.validity.timeout.secs': '60' } }),
    (e) => e.code === 'INVALID_ARGUMENT' && /10x/.test(e.message),
  );
  const single = await table.write(rows, { operation: 'upsert' });
  assert.equal(single.records.inserted, 1);
  assert.equal(single.attempts, 1);
});
