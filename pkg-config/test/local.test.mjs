// Tables that are not behind a URL: a .zip in memory, local files (read lazily), and a storage
// object written in JS.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { open as openFile, readFile, readdir, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { HudiTable } from 'hudi-edge';
import { fixtures, unzippedFixtures } from '../../tests/web/lib/servers.mjs';
import { V6, V9_MOR, expected, sameRows } from './helpers.mjs';

async function walk(root, rel = '') {
  const out = [];
  for (const e of await readdir(join(root, rel), { withFileTypes: true })) {
    const p = rel ? `${rel}/${e.name}` : e.name;
    if (e.isDirectory()) out.push(...(await walk(root, p)));
    else out.push(p);
  }
  return out;
}

test('openZip: a zipped table, in memory', async () => {
  for (const name of [V6, V9_MOR]) {
    const exp = await expected(name);
    const t = await HudiTable.openZip(await readFile(join(fixtures, 'tables', `${name}.zip`)), `${name.split('/').at(-1)}.zip`);
    assert.deepEqual(...sameRows(await t.rows(), exp, exp.snapshot.rows));
    assert.equal((await t.info()).name, exp.table.name);
    t.close();
  }
});

test('openFiles: Blobs with paths under one folder (as a folder picker gives them)', async () => {
  const root = join(unzippedFixtures(), 'tables', V9_MOR);
  const exp = await expected(V9_MOR);
  const top = V9_MOR.split('/').at(-1);
  const files = [];
  for (const p of await walk(root)) {
    const bytes = await readFile(join(root, p));
    files.push({ path: `${top}/${p}`, data: new Blob([bytes]), lastModified: (await stat(join(root, p))).mtimeMs });
  }
  const seen = [];
  const t = await HudiTable.openFiles(files, { onProgress: (p) => seen.push(p) });
  assert.equal(t.location, `local://${top}/`);
  assert.ok(seen.length > 0);
  assert.deepEqual(...sameRows(await t.rows(), exp, exp.snapshot.rows));
  const instants = await t.timeline();
  assert.equal(instants.filter((i) => i.state === 'completed').length, exp.timeline_folder.completed.length);
});

test('openStorage: a storage object over node:fs, with ranged reads', async () => {
  const root = join(unzippedFixtures(), 'tables', V6);
  const exp = await expected(V6);
  let ranged = 0;
  const storage = {
    location: `file://${root}`,
    async get(path, start, end) {
      if (start === undefined) return new Uint8Array(await readFile(join(root, path)));
      ranged++;
      const fh = await openFile(join(root, path));
      try {
        const buf = new Uint8Array(Math.max(0, end - start));
        const { bytesRead } = await fh.read(buf, 0, buf.length, start);
        return buf.subarray(0, bytesRead);
      } finally {
        await fh.close();
      }
    },
    async head(path) {
      const s = await stat(join(root, path)).catch(() => null);
      if (!s) throw Object.assign(new Error(`no ${path}`), { code: 'NOT_FOUND' });
      return { path, size: s.size, lastModified: s.mtimeMs };
    },
    async list(prefix, recursive) {
      const dir = join(root, prefix);
      const entries = await readdir(dir, { withFileTypes: true }).catch(() => []);
      const out = [];
      for (const e of entries) {
        const p = prefix ? `${prefix}/${e.name}` : e.name;
        if (e.isDirectory()) {
          if (recursive) out.push(...(await this.list(p, true)));
          else out.push({ path: p, size: 0, isDir: true });
        } else {
          const s = await stat(join(root, p));
          out.push({ path: p, size: s.size, lastModified: s.mtimeMs });
        }
      }
      return out;
    },
  };
  const t = await HudiTable.openStorage(storage);
  assert.deepEqual(...sameRows(await t.rows(), exp, exp.snapshot.rows));
  assert.ok(ranged > 0, 'parquet footers and columns are read by range');
  await assert.rejects(HudiTable.openStorage({ ...storage, location: 'x', get: async () => { throw Object.assign(new Error('nope'), { code: 'ACCESS_DENIED' }); } }), { code: 'ACCESS_DENIED' });
});

test('openStorage: listing entries read as the engine reads them (getters, odd types)', async () => {
  const { fsStorage } = await import('../../tests/js/fs_storage.mjs');
  const root = join(unzippedFixtures(), 'tables', V9_MOR);
  const exp = await expected(V9_MOR);
  // Entries whose fields are getters on a class, with extra and mistyped fields beside them
  // (a string size the engine would not read either); `this` is the storage object.
  class Entry {
    #m;
    constructor(m) {
      this.#m = m;
    }
    get path() {
      return this.#m.path;
    }
    get size() {
      return this.#m.size;
    }
    get lastModified() {
      return this.#m.lastModified;
    }
    get isDir() {
      return this.#m.isDir;
    }
    get extra() {
      return 10n;
    }
  }
  const plain = fsStorage(root, { readOnly: true });
  let calls = 0;
  const storage = {
    ...plain,
    async list(prefix, recursive) {
      assert.equal(this, storage);
      calls++;
      return (await plain.list(prefix, recursive)).map((m) => new Entry(m));
    },
  };
  const t = await HudiTable.openStorage(storage);
  assert.deepEqual(...sameRows(await t.rows(), exp, exp.snapshot.rows));
  assert.equal((await t.timeline()).filter((i) => i.state === 'completed').length, exp.timeline_folder.completed.length);
  assert.ok(calls > 0);
  t.close();
});

test('prefetchMetadataTable: the metadata table comes with the open; a query takes fewer listings, the same rows', async () => {
  const { fsStorage } = await import('../../tests/js/fs_storage.mjs');
  const root = join(unzippedFixtures(), 'tables', V9_MOR);
  const query = { filters: ['txn_id = TXN-015'] };
  const run = async (prefetchMetadataTable) => {
    const t = await HudiTable.openStorage(fsStorage(root), { prefetchMetadataTable });
    const opened = t.io();
    const rows = await t.rows(query);
    const io = t.io();
    t.close();
    return { opened, rows, io };
  };
  const [plain, prefetched] = [await run(false), await run(true)];
  assert.equal(prefetched.rows.length, 1);
  assert.deepEqual(prefetched.rows, plain.rows);
  // The open asks for the metadata table's properties and one recursive listing of it.
  assert.equal(prefetched.opened.requests, plain.opened.requests + 2);
  // After it, the metadata table's timeline and partitions are not listed again.
  const listings = (io) => io.byPurpose?.listing?.requests ?? 0;
  assert.equal(listings(prefetched.io), 2, JSON.stringify(prefetched.io.byPurpose));
  assert.ok(listings(plain.io) > 2, JSON.stringify(plain.io.byPurpose));
  assert.ok(prefetched.io.requests < plain.io.requests, `${prefetched.io.requests} < ${plain.io.requests}`);
});
