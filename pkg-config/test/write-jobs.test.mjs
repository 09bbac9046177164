// upsert / insert / delete: aborts at several points of a write, each leaving the table
// readable at its last commit (the same rows for the package, PyPI `hudi` and the CLI) with
// the aborted write's instant rolled back, or — aborted once the completed instant is on
// storage — resolving with the commit; a race on the same instant is a CONFLICT naming it.
// Over a storage object on node:fs whose `put` fires the abort at a chosen request.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { cpSync, existsSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { HudiTable, AbortedError, ConflictError } from 'hudi-edge';
import { unzippedFixtures } from '../../tests/web/lib/servers.mjs';
import { WRITE_TABLES, cliBin, dataOnly, lines, python, txnRows } from '../../tests/web/lib/writes.mjs';
import { fsStorage } from '../../tests/js/fs_storage.mjs';
import { repo } from '../../tests/web/lib/servers.mjs';
import { tempDir } from '../../tests/lib/harness.mjs';

function copy(name) {
  const dir = join(tempDir('pkg-jobs'), 't');
  cpSync(join(unzippedFixtures(), 'tables', name), dir, { recursive: true });
  return dir;
}

const TIMELINE = '.hoodie/timeline/';
const isRequested = (p) => p.startsWith(TIMELINE) && /^\d{17}\.(commit|deltacommit)\.requested$/.test(p.slice(TIMELINE.length));
const isInflight = (p) => p.startsWith(TIMELINE) && /^\d{17}(\.deltacommit)?\.inflight$/.test(p.slice(TIMELINE.length));
const isCompleted = (p) => p.startsWith(TIMELINE) && /^\d{17}_\d{17}\.(commit|deltacommit)$/.test(p.slice(TIMELINE.length));
const isDataFile = (p) => !p.startsWith('.hoodie/') && /\.parquet$|\.log\.\d+/.test(p);
const tick = () => new Promise((r) => setTimeout(r, 20));

/** fs storage whose `put` of the first object matching `at` aborts `controller`, before the
 *  object is written (`when: 'before'`: the put then never lands) or after. */
function abortingStorage(root, controller, at, when) {
  const s = fsStorage(root);
  const put = s.put;
  let fired = false;
  s.put = async (path, data, mode, signal) => {
    if (!fired && at(path)) {
      fired = true;
      if (when === 'before') {
        controller.abort(new Error(`test abort before ${path}`));
        await tick();
        throw Object.assign(new Error('aborted'), { name: 'AbortError' });
      }
      const r = await put(path, data, mode, signal);
      controller.abort(new Error(`test abort after ${path}`));
      await tick();
      return r;
    }
    return put(path, data, mode, signal);
  };
  return s;
}

/** Rows of the table at `root` as the package, PyPI `hudi` and the CLI read them (asserted equal). */
async function agreedRows(root) {
  const t = await HudiTable.openStorage(fsStorage(root));
  const ours = lines(await t.rows());
  t.close();
  const read = (cmd, args) => execFileSync(cmd, args, { encoding: 'utf8' }).split('\n').filter(Boolean).map((l) => JSON.parse(l));
  assert.deepEqual(lines(read(python, [join(repo, 'tests', 'write', 'hudi_rs_rows.py'), root])), ours, 'PyPI hudi reads what the package reads');
  if (existsSync(cliBin)) assert.deepEqual(lines(read(cliBin, ['read', root, '--format', 'jsonl'])), ours, 'the CLI reads what the package reads');
  return ours;
}

/** Instants with a requested or inflight file and no completed one. */
function pendingInstants(root) {
  const names = readdirSync(join(root, '.hoodie', 'timeline'));
  const done = new Set(names.filter((n) => /^\d{17}_\d{17}\./.test(n)).map((n) => n.slice(0, 17)));
  return names.filter((n) => /\.(requested|inflight)$/.test(n) && !done.has(n.slice(0, 17)));
}

for (const [kind, name] of Object.entries(WRITE_TABLES)) {
  const points = [
    ['before the requested instant is written', isRequested, 'before'],
    ['after the inflight instant', isInflight, 'after'],
    ['after the first data file', isDataFile, 'after'],
    ['before the completed instant is written', isCompleted, 'before'],
  ];
  for (const [what, at, when] of points) {
    test(`${kind}: aborted ${what}: nothing visible, the instant rolled back, the table readable at its last commit`, async () => {
      const root = copy(name);
      const before = await agreedRows(root);
      const controller = new AbortController();
      const t = await HudiTable.openStorage(abortingStorage(root, controller, at, when));
      const phases = [];
      const err = await t.upsert(txnRows(kind, 10, { prefix: 'ABORT' }), { signal: controller.signal, onProgress: (p) => phases.push(p.phase) }).then(
        (r) => assert.fail(`resolved: ${JSON.stringify(r)}`),
        (e) => e,
      );
      assert.ok(err instanceof AbortedError && err.code === 'ABORTED', `${err?.code}: ${err?.message}`);
      assert.deepEqual(err.pending, []);
      if (err.rolledBack.length > 0) assert.ok(phases.includes('rolling-back'));
      // A write that had put its inflight instant rolled it back; one stopped at `requested` wrote nothing.
      if (at !== isRequested) assert.equal(err.rolledBack.length, 1, JSON.stringify(err.rolledBack));
      assert.deepEqual(pendingInstants(root), [], 'no pending instant left');
      assert.deepEqual(await agreedRows(root), before, 'the rows of the last commit');
      assert.deepEqual(lines((await t.rows()).map(dataOnly)), lines(before.map((l) => dataOnly(JSON.parse(l)))), 'the handle reads them too');
      // The table takes the next write.
      const next = await t.upsert(txnRows(kind, 5, { prefix: 'NEXT' }));
      assert.equal(next.inserted, 5);
      t.close();
    });
  }

  test(`${kind}: aborted after the completed instant is written: resolves with the commit`, async () => {
    const root = copy(name);
    const controller = new AbortController();
    const t = await HudiTable.openStorage(abortingStorage(root, controller, isCompleted, 'after'));
    const rows = txnRows(kind, 10, { prefix: 'LATE' });
    const r = await t.upsert(rows, { signal: controller.signal });
    assert.ok(controller.signal.aborted);
    assert.equal(r.abortedAfterCommit, true);
    assert.deepEqual([r.operation, r.inserted, r.updated, r.deleted], ['upsert', 10, 0, 0]);
    assert.match(r.instant, /^\d{17}$/);
    assert.ok(r.filesWritten.length > 0);
    const after = await agreedRows(root);
    for (const row of rows) assert.ok(after.some((l) => JSON.parse(l).txn_id === row.txn_id), row.txn_id);
    assert.equal((await t.timeline()).at(-1).requestedTime, r.instant);
    t.close();
  });
}

test('two writers on the same instant: CONFLICT naming it, nothing visible', async () => {
  const root = copy(WRITE_TABLES.cow);
  const before = await agreedRows(root);
  // The other writer creates the requested instant of the same time first.
  const s = fsStorage(root);
  const put = s.put;
  let other;
  s.put = async (path, data, mode, signal) => {
    if (!other && isRequested(path)) {
      other = path.slice(TIMELINE.length, TIMELINE.length + 17);
      writeFileSync(join(root, path), data);
    }
    return put(path, data, mode, signal);
  };
  const t = await HudiTable.openStorage(s);
  await assert.rejects(t.upsert(txnRows('cow', 3, { prefix: 'RACE' }), { commitRetries: 0 }), (e) => {
    assert.ok(e instanceof ConflictError && e.code === 'CONFLICT', `${e.code}: ${e.message}`);
    assert.equal(e.instant, other, e.message);
    return true;
  });
  assert.deepEqual(lines((await t.rows()).map(dataOnly)), lines(before.map((l) => dataOnly(JSON.parse(l)))));
});

test('deferServices: the write answers at its commit point; runServices() runs what it left, refresh({ forWrite }) readies the next write', async () => {
  const root = copy(WRITE_TABLES.mor);
  const compactEvery = { 'hoodie.compact.inline': 'true', 'hoodie.compact.inline.max.delta.commits': '1' };
  const compactions = () => readdirSync(join(root, '.hoodie', 'timeline')).filter((n) => /^\d{17}_\d{17}\.commit$/.test(n));
  const t = await HudiTable.openStorage(fsStorage(root));
  const before = compactions();
  const w = await t.upsert(txnRows('mor', 10, { prefix: 'DEFER' }), { options: compactEvery, deferServices: true });
  assert.equal(w.inserted, 10);
  assert.deepEqual([w.compaction, w.cleans, w.archival], [null, [], null], 'no service ran with the write');
  assert.deepEqual(compactions(), before);
  const rows = await agreedRows(root);
  const done = await t.runServices({ options: compactEvery });
  assert.equal(done.compaction?.completed?.length, 1, JSON.stringify(done.compaction));
  assert.deepEqual(done.serviceErrors, []);
  assert.ok(done.io.requests > 0);
  assert.equal(compactions().length, before.length + 1, 'the compaction the write would have run');
  // The same rows (a compacted row's file name changes, nothing else).
  const data = (ls) => lines(ls.map((l) => dataOnly(JSON.parse(l))));
  assert.deepEqual(data(await agreedRows(root)), data(rows), 'the same rows after it');
  assert.deepEqual(lines((await t.rows()).map(dataOnly)), data(rows), 'the handle sees the table as the services left it');
  const again = await t.runServices({ options: compactEvery });
  assert.deepEqual([again.compaction, again.cleans.length], [null, 0], 'nothing due any more');
  await t.refresh({ forWrite: true });
  const next = await t.upsert(txnRows('mor', 5, { prefix: 'DEFER', from: 10 }));
  assert.equal(next.inserted, 5);
  t.close();
});
