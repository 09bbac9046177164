// Errors and aborts by the platform's conventions: aborts named `AbortError` / `TimeoutError`
// with `signal.reason` as `cause`; names that survive minification; one code per condition
// whichever call meets it; the same spelling of counts in `commit()` and the commit results.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { cpSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import * as hudi from 'hudi-edge';
import { fixtures, unzippedFixtures } from '../../tests/web/lib/servers.mjs';
import { tempDir } from '../../tests/lib/harness.mjs';
import { V9 } from './helpers.mjs';

const { HudiTable, AbortedError, HudiError, ReadOnlyError } = hudi;
const scratch = tempDir('pkg-conventions');
after(() => rmSync(scratch, { recursive: true, force: true }));

const table = () => {
  const dir = join(scratch, `t${Math.random().toString(36).slice(2)}`);
  cpSync(join(unzippedFixtures(), 'tables', V9), dir, { recursive: true });
  return dir;
};

test('aborts: name AbortError, cause signal.reason; AbortSignal.timeout() gives TimeoutError', async () => {
  const t = await HudiTable.open(table());
  const plain = new AbortController();
  plain.abort();
  const timeout = AbortSignal.timeout(1);
  await sleep(20);
  const custom = new AbortController();
  const why = new Error('user left the page');
  custom.abort(why);
  for (const [signal, name] of [
    [plain.signal, 'AbortError'],
    [timeout, 'TimeoutError'],
    [custom.signal, 'AbortError'],
  ]) {
    for (const call of [() => t.rows({ signal }), () => t.timeline({ signal }), () => HudiTable.open(table(), { signal }), () => t.upsert([{ txn_id: 'x' }], { signal })]) {
      await assert.rejects(call(), (e) => {
        assert.equal(e.name, name, `${e.name}: ${e.message}`);
        assert.equal(e.cause, signal.reason, 'cause is the reason');
        assert.ok(e instanceof AbortedError && e instanceof HudiError && e.code === 'ABORTED');
        return true;
      });
    }
  }
  // During a read: the signal fires from the read's own progress.
  const mid = new AbortController();
  await assert.rejects(t.rows({ signal: mid.signal, onProgress: () => mid.abort() }), (e) => e.name === 'AbortError' && e.cause === mid.signal.reason);
  t.close();
});

test('error names are literals: a minified bundle reports the same names', async () => {
  const names = Object.entries(hudi)
    .filter(([k, v]) => typeof v === 'function' && v.prototype instanceof Error)
    .map(([k, C]) => [k, new C('m', undefined).name]);
  for (const [k, name] of names) assert.equal(name, k === 'AbortedError' ? 'AbortError' : k);
  const dir = tempDir('pkg-minified');
  writeFileSync(
    join(dir, 'app.mjs'),
    `import { HudiTable, initWasm } from ${JSON.stringify(join(import.meta.dirname, '..', 'dist', 'node.js'))};
     import { readFileSync } from 'node:fs';
     await initWasm(readFileSync(process.argv[2]));
     try { await HudiTable.open(process.argv[3]); } catch (e) { console.log(JSON.stringify([e.name, e.code, e.constructor.name])); }`,
  );
  const esbuild = join(import.meta.dirname, '..', 'node_modules', '.bin', 'esbuild');
  // A Node bundle: the module is not next to the bundle, so the app hands its bytes over.
  execFileSync(esbuild, ['app.mjs', '--bundle', '--minify', '--platform=node', '--format=esm', '--outfile=out.mjs', '--log-level=warning'], { cwd: dir });
  const wasm = join(import.meta.dirname, '..', 'dist', 'wasm', 'hudi_edge_bg.wasm');
  const out = execFileSync(process.execPath, [join(dir, 'out.mjs'), wasm, join(dir, 'no-such-table')], { cwd: dir, encoding: 'utf8' });
  const [name, code, ctor] = JSON.parse(out);
  assert.deepEqual([name, code], ['NotFoundError', 'NOT_FOUND']);
  assert.notEqual(ctor, 'NotFoundError', 'the bundle was minified (the class was renamed)');
  rmSync(dir, { recursive: true, force: true });
});

test('READ_ONLY: write(), upsert(), delete(), clean(), compact() on a read-only table all say READ_ONLY', async () => {
  const t = await HudiTable.openZip(readFileSync(join(fixtures, 'tables', `${V9}.zip`)), 'v9.zip');
  for (const call of [
    () => t.write([{ txn_id: 'x' }], { operation: 'upsert' }),
    () => t.upsert([{ txn_id: 'x' }]),
    () => t.insert([{ txn_id: 'x' }]),
    () => t.delete([{ txn_id: 'x' }]),
    () => t.clean(),
    () => t.compact(),
    () => t.archive(),
    () => t.index(),
  ]) {
    await assert.rejects(call(), (e) => e instanceof ReadOnlyError && e.code === 'READ_ONLY' && e.name === 'ReadOnlyError');
  }
  t.close();
});

test('commit() spells counts as the commit result does: inserted, updated, deleted', async () => {
  const dir = join(scratch, 'counts');
  const t = await HudiTable.create(dir, { columns: 'id STRING NOT NULL, ts BIGINT', recordKey: 'id', orderingFields: 'ts' });
  await t.insert([{ id: 'a', ts: 1n }, { id: 'b', ts: 1n }]);
  const r = await t.upsert([{ id: 'a', ts: 2n }, { id: 'c', ts: 1n }]);
  const d = await t.commit(r.instant);
  assert.deepEqual([d.inserted, d.updated, d.deleted], [r.inserted, r.updated, r.deleted]);
  assert.deepEqual([d.inserted, d.updated, d.deleted], [1, 1, 0]);
  assert.ok(!('inserts' in d) && d.files.every((f) => 'inserted' in f && !('inserts' in f)));
  t.close();
});
