// Local tables in Node: `open` and `create` take absolute paths, relative paths and file://
// URLs (strings and URL objects), through `hudi-edge/fs`'s storage over node:fs: reads by
// range, writes with exclusive creates and renames, and the table services.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { cpSync, existsSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { execFileSync } from 'node:child_process';
import { join, relative } from 'node:path';
import { pathToFileURL } from 'node:url';
import { HudiTable, ConflictError } from 'hudi-edge';
import { fsStorage } from 'hudi-edge/fs';
import { unzippedFixtures } from '../../tests/web/lib/servers.mjs';
import { tempDir } from '../../tests/lib/harness.mjs';
import { V6, V9_MOR, expected, sameRows } from './helpers.mjs';

const scratch = tempDir('pkg-local');
after(() => rmSync(scratch, { recursive: true, force: true }));

test('open: an absolute path, a relative path, a file:// URL and a URL object read the same rows', async () => {
  for (const name of [V6, V9_MOR]) {
    const dir = join(scratch, name.split('/').at(-1));
    cpSync(join(unzippedFixtures(), 'tables', name), dir, { recursive: true });
    const exp = await expected(name);
    for (const where of [dir, relative(process.cwd(), dir), pathToFileURL(dir).href, pathToFileURL(dir)]) {
      const t = await HudiTable.open(where);
      assert.equal(t.location, pathToFileURL(dir).href);
      assert.deepEqual(...sameRows(await t.rows(), exp, exp.snapshot.rows), `${name} via ${where}`);
      t.close();
    }
  }
});

test('fsStorage: ranged reads, listings, NOT_FOUND, and no path outside the table', async () => {
  const dir = join(scratch, 'fs');
  cpSync(join(unzippedFixtures(), 'tables', V6), dir, { recursive: true });
  const s = fsStorage(dir);
  const props = await s.get('.hoodie/hoodie.properties');
  assert.deepEqual(await s.get('.hoodie/hoodie.properties', 2, 10), props.subarray(2, 10));
  assert.deepEqual(await s.get('.hoodie/hoodie.properties', props.length - 3, props.length + 50), props.subarray(-3), 'a range past the end is cut');
  assert.equal((await s.head('.hoodie/hoodie.properties')).size, props.length);
  await assert.rejects(s.head('nope'), { code: 'ENOENT' });
  await assert.rejects(s.head('.hoodie'), { code: 'ENOENT' }, 'a directory is no object');
  await assert.rejects(s.get('../../etc/passwd'), { code: 'EACCES' });
  const top = await s.list('', false);
  assert.ok(top.some((m) => m.path === '.hoodie' && m.isDir));
  const all = await s.list('', true);
  assert.ok(all.every((m) => !m.isDir) && all.some((m) => m.path === '.hoodie/hoodie.properties'));
  assert.deepEqual(await s.list('no/such/dir', true), []);
  const after = await s.listAfter('.hoodie/~');
  assert.ok(after.length > 0 && after.every((m) => m.path > '.hoodie/~'));
});

const ORDERS = { type: 'mor', columns: 'id STRING NOT NULL, ts BIGINT, region STRING, note STRING', recordKey: 'id', partitionBy: 'region', orderingFields: 'ts' };
const order = (i, ts = 1n, note = `n${i}`) => ({ id: `O-${i}`, ts, region: i % 2 ? 'eu' : 'us', note });
// The user's columns: compaction moves rows to new files (`_hoodie_file_name`).
const byId = (rows) => rows.map(({ id, ts, region, note }) => ({ id, ts, region, note })).sort((a, b) => a.id.localeCompare(b.id));

test('create, write, compact, clean and archive a table at a path; a file:// URL reopens it', async () => {
  const dir = join(scratch, 'new', 'orders');
  const t = await HudiTable.create(dir, ORDERS);
  assert.equal((await t.info()).type, 'MERGE_ON_READ');
  await assert.rejects(HudiTable.create(pathToFileURL(dir), ORDERS), ConflictError, 'the properties are created exclusively');
  const off = { 'hoodie.archive.automatic': 'false', 'hoodie.clean.automatic': 'false', 'hoodie.compact.inline': 'false' };
  assert.equal((await t.insert([0, 1, 2, 3].map((i) => order(i)), { options: off })).inserted, 4);
  for (let n = 2; n < 8; n++) await t.upsert([order(1, BigInt(n), `v${n}`), order(2, BigInt(n), `v${n}`)], { options: off });
  assert.equal((await t.delete([{ id: 'O-3', region: 'eu', ts: 9n }], { options: off })).deleted, 1);
  const logs = readdirSync(dir, { recursive: true }).filter((f) => !f.startsWith('.hoodie') && f.includes('.log.'));
  assert.ok(logs.length > 0, 'Merge-On-Read updates went to log files');
  const want = await t.rows();
  assert.deepEqual(byId(want).map((r) => [r.id, r.note]), [['O-0', 'n0'], ['O-1', 'v7'], ['O-2', 'v7']]);

  const compacted = await t.compact();
  assert.equal(compacted.completed.length, 1, JSON.stringify(compacted));
  const archived = await t.archive({ options: { 'hoodie.keep.min.commits': '2', 'hoodie.keep.max.commits': '3', 'hoodie.clean.commits.retained': '1' } });
  assert.ok(archived.dataTable, 'the timeline was archived');
  assert.ok(existsSync(join(dir, archived.dataTable.historyFile)));
  assert.deepEqual(byId(await t.rows()), byId(want));
  t.close();

  const again = await HudiTable.open(pathToFileURL(dir).href);
  assert.deepEqual(byId(await again.rows()), byId(want));
  again.close();
  assert.deepEqual(readdirSync(dir, { recursive: true }).filter((f) => String(f).includes('hudi-edge-tmp')), [], 'no temp files left');
});

test('clean() at a relative path deletes the old slices from disk', async () => {
  const dir = join(scratch, 'cleaned');
  const t = await HudiTable.create(relative(process.cwd(), dir), { ...ORDERS, type: 'cow' });
  const off = { 'hoodie.clean.automatic': 'false' };
  for (let n = 0; n < 5; n++) await t.upsert([order(1, BigInt(n + 1)), order(2, BigInt(n + 1))], { options: off });
  const parquet = () => readdirSync(dir, { recursive: true }).filter((f) => !f.startsWith('.hoodie') && f.endsWith('.parquet'));
  const before = parquet();
  const rows = await t.rows();
  const [c] = await t.clean({ options: { 'hoodie.clean.commits.retained': '2' } });
  assert.equal(c.filesDeleted, 4);
  assert.equal(parquet().length, before.length - 4, 'the files are gone from disk');
  assert.deepEqual(byId(await t.rows()), byId(rows));
  t.close();
});

test('fsStorage: exclusive creates race to one winner; overwrite replaces; etags guard updates', async () => {
  const s = fsStorage(join(scratch, 'puts'));
  const bytes = (t) => new TextEncoder().encode(t);
  const outcomes = await Promise.allSettled([s.put('a/x', bytes('1'), 'create'), s.put('a/x', bytes('2'), 'create')]);
  assert.deepEqual(outcomes.map((o) => o.status).sort(), ['fulfilled', 'rejected']);
  assert.equal(outcomes.find((o) => o.status === 'rejected').reason.conflict, true);
  const m = await s.put('a/x', bytes('3'), 'overwrite');
  assert.equal(new TextDecoder().decode(await s.get('a/x')), '3');
  assert.equal((await s.head('a/x')).etag, m.etag);
  const m2 = await s.put('a/x', bytes('44'), m.etag);
  await assert.rejects(s.put('a/x', bytes('5'), m.etag), (e) => e.conflict === true, 'a stale etag');
  assert.notEqual(m2.etag, m.etag);
  await s.delete('a/x');
  await s.delete('a/x');
  await assert.rejects(s.head('a/x'), { code: 'ENOENT' });
  const ro = fsStorage(join(scratch, 'puts'), { readOnly: true });
  assert.equal(ro.put, undefined);
});

test('the browser entry has no local storage: a path is not a table URL there (and node:fs is never loaded)', () => {
  const browser = join(import.meta.dirname, '..', 'dist', 'browser.js');
  const script = `const { HudiTable } = await import(${JSON.stringify(browser)});
    await HudiTable.open('/some/table').catch((e) => console.log(JSON.stringify([e.code, e.message])));`;
  const out = execFileSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8' });
  const [code, message] = JSON.parse(out);
  assert.equal(code, 'INVALID_ARGUMENT');
  assert.match(message, /local paths and file:\/\/ URLs open in Node/);
  const dist = join(import.meta.dirname, '..', 'dist');
  for (const f of ['browser.js', 'index.js', 'table.js', 'local-tables.js']) {
    assert.doesNotMatch(readFileSync(join(dist, f), 'utf8'), /(from|import\()\s*['"](node:|\.\/fs-storage)/, `${f} imports no node: module`);
  }
});
