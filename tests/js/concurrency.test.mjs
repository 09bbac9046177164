// Multi-writer options through the wasm build in Node: over a JS storage that gives no
// ETags (conditional updates impossible) concurrent writing is refused UNSUPPORTED, naming
// the lock object, and no lock is left behind; the same storage still takes single-writer
// commits. Java's lock settings are checked before any request (a 60 s validity with the
// default 30 s renewal is refused as Java refuses it).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, existsSync, readFileSync, statSync, rmSync } from 'node:fs';
import { join, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createRequire } from 'node:module';
import { tableFromJSON, tableToIPC } from 'apache-arrow';
import { fsStorage } from './fs_storage.mjs';
import { tableCopy } from '../lib/fixtures.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const repo = join(here, '..', '..');
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

// Java's smallest lease (validity >= 10 s, >= 10 x renewal) and a 2 s heartbeat expiry, so a
// writer cut off inside its critical section is taken over within seconds.
const SHORT_LEASE = {
  ...OCC,
  'hoodie.write.lock.storage.validity.timeout.secs': '10',
  'hoodie.write.lock.storage.renew.interval.secs': '1',
  'hoodie.client.heartbeat.interval_in_ms': '1000',
  'hoodie.client.heartbeat.tolerable.misses': '2',
  'hoodie.write.lock.wait_time_ms': '60000',
  'hoodie.write.lock.wait_time_ms_between_retry': '50',
};
const LOCK = join('.hoodie', '.locks', 'table_lock.json');
const DATA_COMMIT = /^\.hoodie\/timeline\/(\d+)_\d+\.(commit|deltacommit)$/;
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

// Holds the put of the data table's completed instant (the commit point, inside the locked
// critical section) until the write's signal aborts it. `landed`: the object is written
// before the hold (the server got the request, its answer is lost to the abort); otherwise
// the request is dropped unsent.
function heldAtCommitPoint(storage, { landed }) {
  let reached;
  const held = new Promise((r) => (reached = r));
  let once = false;
  const put = async (path, data, mode, signal) => {
    const m = DATA_COMMIT.exec(path);
    if (!m || once) return storage.put(path, data, mode, signal);
    once = true;
    if (landed) await storage.put(path, data, mode);
    reached(m[1]);
    await new Promise((_, reject) => signal.addEventListener('abort', () => reject(signal.reason), { once: true }));
  };
  return { held, storage: { ...storage, put } };
}

const lockFile = (root) => readFileSync(join(root, LOCK), 'utf8');
const beatTime = (root, instant) => statSync(join(root, '.hoodie', '.heartbeat', instant)).mtimeMs;

async function keys(root) {
  const fresh = await WasmTable.openJs(fsStorage(root, { etags: true }));
  return new Set((await fresh.readJson({}, false)).map((r) => r.txn_id));
}

// One table, one abort at the commit point, then a second writer; answers what the test checks.
async function abortAtCommitPoint(landed) {
  const root = copy('sample_table/cow/v9_txns_simple_overwrite');
  const gate = heldAtCommitPoint(fsStorage(root, { etags: true }), { landed });
  const table = await WasmTable.openJs(gate.storage);
  const [row] = await table.readJson({ limit: 1 }, false);
  const data = Object.fromEntries(Object.entries(row).filter(([k]) => !k.startsWith('_hoodie_')));
  const rows = (key) => tableToIPC(tableFromJSON([{ ...data, txn_id: key }]), 'stream');
  const aborted = `ABORTED-${landed ? 'LANDED' : 'DROPPED'}`;
  const abort = new AbortController();
  const writing = table.write(rows(aborted), { operation: 'upsert', options: SHORT_LEASE }, abort.signal);
  const instant = await gate.held;
  assert.equal(JSON.parse(lockFile(root)).expired, false, 'the writer holds the lock at its commit point');
  abort.abort();
  await assert.rejects(writing, (e) => e.code === 'ABORTED');
  const lockAtAbort = lockFile(root);
  const held = JSON.parse(lockAtAbort);
  const beatAtAbort = beatTime(root, instant);
  // Nothing renews after the abort: the lease only runs out (renewal is every 1 s, beats too).
  await sleep(2500);
  assert.equal(lockFile(root), lockAtAbort, 'the lock was renewed after the abort');
  assert.equal(beatTime(root, instant), beatAtAbort, 'the heartbeat beat after the abort');
  const whileHeld = await keys(root);
  // The next writer waits for the lease, then rolls back the attempt if it did not complete.
  const next = await WasmTable.openJs(fsStorage(root, { etags: true }));
  const after = await next.write(rows(`AFTER-${aborted}`), { operation: 'upsert', options: SHORT_LEASE });
  const tookOver = Date.now();
  const timeline = readdirSync(join(root, '.hoodie', 'timeline'));
  return { aborted, instant, held, whileHeld, after, tookOver, timeline, root, final: await keys(root) };
}

test('an abort inside the locked commit completes it or leaves nothing, and the lease runs out', async () => {
  const [dropped, landed] = await Promise.all([abortAtCommitPoint(false), abortAtCommitPoint(true)]);
  for (const r of [dropped, landed]) {
    // The lock was taken over only after its validity (+ Java's 500 ms drift allowance).
    assert.ok(r.tookOver >= r.held.validUntil + 500, `${r.aborted}: next writer committed before the lease ran out`);
    assert.ok(r.final.has(`AFTER-${r.aborted}`));
    assert.equal(JSON.parse(lockFile(r.root)).expired, true, `${r.aborted}: lock left held`);
    assert.deepEqual(readdirSync(join(r.root, '.hoodie', '.heartbeat')), [], `${r.aborted}: heartbeat left`);
    const pending = r.timeline.filter((f) => /\.(requested|inflight)$/.test(f) && !r.timeline.some((c) => c.startsWith(`${f.split('.')[0]}_`)));
    assert.deepEqual(pending, [], `${r.aborted}: pending instants left`);
  }
  // Dropped before the commit point: nothing visible, ever; the next writer rolled it back.
  assert.equal(dropped.whileHeld.has(dropped.aborted), false);
  assert.equal(dropped.final.has(dropped.aborted), false);
  assert.deepEqual(dropped.after.rolledBack, [dropped.instant]);
  assert.equal(dropped.timeline.some((f) => f.startsWith(`${dropped.instant}`)), false, 'the aborted attempt left instant files');
  // Landed: the commit is complete and stays; nothing of it is rolled back.
  assert.ok(landed.whileHeld.has(landed.aborted));
  assert.ok(landed.final.has(landed.aborted));
  assert.deepEqual(landed.after.rolledBack, []);
  for (const r of [dropped, landed]) rmSync(dirname(r.root), { recursive: true, force: true });
});
