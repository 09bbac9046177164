// The two wasm modules: reads load only the read module; the first write loads the full one
// and moves the writing table to it, while tables opened before keep reading.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { cpSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { unzippedFixtures } from '../../tests/web/lib/servers.mjs';
import { tempDir } from '../../tests/lib/harness.mjs';
import { V9_MOR } from './helpers.mjs';

const scratch = tempDir('pkg-modules');
after(() => rmSync(scratch, { recursive: true, force: true }));
const dist = join(import.meta.dirname, '..', 'dist');

test('the read module holds no writes and is the smaller one', async () => {
  const exportsOf = async (f) => WebAssembly.Module.exports(await WebAssembly.compile(readFileSync(join(dist, 'wasm', f)))).map((e) => e.name);
  const read = await exportsOf('hudi_edge_read_bg.wasm');
  const full = await exportsOf('hudi_edge_bg.wasm');
  for (const name of ['wasmtable_write', 'wasmtable_compact', 'wasmtable_clean', 'wasmtable_fix', 'wasmtable_index']) {
    assert.ok(full.includes(name), `full module exports ${name}`);
    assert.ok(!read.includes(name), `read module does not export ${name}`);
  }
  for (const name of ['wasmtable_openUrl', 'wasmtable_openJs', 'wasmtable_readArrowPieces', 'wasmtable_changesArrow', 'wasmtable_manifest', 'wasmtable_health', 'discoverTables']) {
    assert.ok(read.includes(name), `read module exports ${name}`);
  }
  const gz = (f) => gzipSync(readFileSync(join(dist, 'wasm', f)), { level: 9 }).length;
  assert.ok(gz('hudi_edge_read_bg.wasm') < gz('hudi_edge_bg.wasm'));
});

test('reads, health and discovery load the read module only; a write loads the full one, and every handle keeps working', () => {
  const dir = join(scratch, 'mor');
  cpSync(join(unzippedFixtures(), 'tables', V9_MOR), dir, { recursive: true });
  // The modules the package reads from disk, seen by wrapping node:fs/promises' readFile and
  // open (the Node entry reads a module through a file handle) before the package is imported.
  const app = join(scratch, 'app.mjs');
  writeFileSync(
    app,
    `import fsp from 'node:fs/promises';
     import { syncBuiltinESMExports } from 'node:module';
     const loaded = [];
     const readFile = fsp.readFile;
     const seen = (p) => String(p).endsWith('.wasm') && loaded.push(String(p).split('/').at(-1));
     fsp.readFile = (p, ...a) => (seen(p), readFile(p, ...a));
     const open = fsp.open;
     fsp.open = (p, ...a) => (seen(p), open(p, ...a));
     syncBuiltinESMExports();
     const { HudiTable, discover } = await import(${JSON.stringify(join(dist, 'node.js'))});
     const dir = process.argv[2];
     const found = await discover(dir);
     const a = await HudiTable.open(dir);
     const b = await HudiTable.open(dir);
     const rows = await a.rows();
     const health = await a.health();
     const afterRead = [...loaded];
     const commits = async (t) => (await t.timeline({ operations: false })).filter((i) => i.state === 'completed').length;
     const before = await commits(a);
     const { _hoodie_commit_time, _hoodie_commit_seqno, _hoodie_record_key, _hoodie_partition_path, _hoodie_file_name, ...row } = rows[0];
     const r = await a.upsert([row]);
     const afterWrite = [...loaded];
     const c = await HudiTable.open(dir);
     await b.refresh();
     console.log(JSON.stringify({
       afterRead, afterWrite, afterAll: loaded,
       discovered: found.tables.length, findings: Array.isArray(health.findings),
       rows: rows.length, updated: r.updated, inserted: r.inserted,
       commits: [before, await commits(a), await commits(b), await commits(c)],
       rowsAfter: [(await a.rows()).length, (await b.rows()).length, (await c.rows()).length],
     }));`,
  );
  const out = JSON.parse(execFileSync(process.execPath, [app, dir], { encoding: 'utf8' }));
  assert.deepEqual(out.afterRead, ['hudi_edge_read_bg.wasm'], 'discovery, opens, reads and health load the read module alone');
  assert.equal(out.discovered, 1);
  assert.ok(out.findings);
  assert.deepEqual(out.afterWrite, ['hudi_edge_read_bg.wasm', 'hudi_edge_bg.wasm'], 'the first write loads the full module');
  assert.deepEqual(out.afterAll, out.afterWrite, 'once: later opens use the full module');
  assert.equal(out.updated + out.inserted, 1);
  const [before, ...later] = out.commits;
  assert.deepEqual(later, [before + 1, before + 1, before + 1], 'the writer, a handle opened before (refreshed) and one opened after see the commit');
  assert.deepEqual(out.rowsAfter, [out.rows, out.rows, out.rows], 'an upsert of a row the table holds keeps the count');
});

test('a cold open sends its first round before the module is loaded, and the storage keeps every method', () => {
  const dir = join(scratch, 'cold');
  cpSync(join(unzippedFixtures(), 'tables', V9_MOR), dir, { recursive: true });
  const app = join(scratch, 'cold.mjs');
  const fsStorageUrl = new URL('../../tests/js/fs_storage.mjs', import.meta.url).href;
  writeFileSync(
    app,
    `import { fsStorage } from ${JSON.stringify(fsStorageUrl)};
     const { HudiTable } = await import(${JSON.stringify(join(dist, 'node.js'))});
     const calls = [];
     const inner = fsStorage(process.argv[2]);
     const storage = { location: inner.location };
     for (const k of ['get', 'head', 'list', 'put', 'delete']) {
       storage[k] = (...a) => (calls.push(k + ' ' + a[0] + (k === 'get' ? ' ' + (a[1] ?? '') + '-' + (a[2] ?? '') : k === 'list' ? ' ' + a[1] : '')), inner[k](...a));
     }
     const opening = HudiTable.openStorage(storage, { prefetchMetadataTable: true });
     const sentBeforeAnyAwait = [...calls];
     const t = await opening;
     const openCalls = [...calls];
     const rows = await t.rows();
     const { _hoodie_commit_time, _hoodie_commit_seqno, _hoodie_record_key, _hoodie_partition_path, _hoodie_file_name, ...row } = rows[0];
     const written = await t.upsert([row]);
     const warm = await HudiTable.openStorage(storage, { prefetchMetadataTable: true });
     console.log(JSON.stringify({ sentBeforeAnyAwait, openCalls, rows: rows.length, written: written.updated + written.inserted, rowsAfter: (await warm.rows()).length, puts: calls.filter((c) => c.startsWith('put ')).length }));`,
  );
  const out = JSON.parse(execFileSync(process.execPath, [app, dir], { encoding: 'utf8' }));
  const firstRound = ['get .hoodie/hoodie.properties -', 'list .hoodie/timeline false', 'get .hoodie/metadata/.hoodie/hoodie.properties -', 'list .hoodie/metadata true'];
  assert.deepEqual(out.sentBeforeAnyAwait, firstRound, 'the first round leaves before the open awaits the module');
  for (const c of firstRound) assert.equal(out.openCalls.filter((x) => x === c).length, 1, `${c}: asked once in the open`);
  assert.ok(out.rows > 0);
  assert.equal(out.written, 1, 'writes go through the same storage (put and delete kept)');
  assert.ok(out.puts > 0);
  assert.equal(out.rowsAfter, out.rows);
});

test('a cold open by URL sends its first round before the module is loaded, each request once', async () => {
  const { startNginx } = await import('../../tests/web/lib/servers.mjs');
  const nginx = await startNginx({ mounts: { '/tables/': join(unzippedFixtures(), 'tables') } });
  try {
    const app = join(scratch, 'cold-url.mjs');
    writeFileSync(
      app,
      `const { HudiTable } = await import(${JSON.stringify(join(dist, 'node.js'))});
       const calls = [];
       const counting = (url, init) => (calls.push(String(url).split('/tables/')[1] + (init?.headers?.Range ? ' ' + init.headers.Range : '')), fetch(url, init));
       const opening = HudiTable.open(process.argv[2], { fetch: counting, prefetchMetadataTable: true });
       const sentBeforeAnyAwait = [...calls];
       const t = await opening;
       const openCalls = [...calls];
       const rows = await t.rows();
       console.log(JSON.stringify({ sentBeforeAnyAwait, openCalls, rows: rows.length, io: t.io().requests }));`,
    );
    const table = `${nginx.url}/tables/${V9_MOR}`;
    const out = JSON.parse(execFileSync(process.execPath, [app, table], { encoding: 'utf8' }));
    const firstRound = ['.hoodie/hoodie.properties', '.hoodie/hudi-edge-manifest.json', '.hoodie/metadata/.hoodie/hoodie.properties'].map((p) => `${V9_MOR}/${p}`);
    assert.deepEqual(out.sentBeforeAnyAwait, firstRound, 'the first round leaves before the open awaits the module');
    for (const c of firstRound) assert.equal(out.openCalls.filter((x) => x === c).length, 1, `${c}: fetched once in the open`);
    assert.ok(out.rows > 0);
  } finally {
    await nginx.stop();
  }
});
