// The wasm build in Node: every fixture table read through the same expectations as the
// native tests (snapshot, time travel, incremental, read-optimized, filters). Tables are
// handed in as zip bytes (in-memory storage) and, for a few, through a Node fs-backed
// storage implemented in JS (the JsStorage path).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, readdirSync, statSync, mkdtempSync } from 'node:fs';
import { readFile, stat, readdir, open } from 'node:fs/promises';
import { join, relative, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createRequire } from 'node:module';
import { execFileSync } from 'node:child_process';
import { tmpdir } from 'node:os';

const here = dirname(fileURLToPath(import.meta.url));
const repo = join(here, '..', '..');
const fixtures = process.env.HUDI_EDGE_FIXTURES ?? join(repo, 'tests', 'data', 'fixtures');
const wasmDir = process.env.HUDI_EDGE_WASM_NODE ?? join(repo, 'target', 'wasm-node');
const require = createRequire(import.meta.url);
const { WasmTable } = require(join(wasmDir, 'hudi_edge.js'));
// Which table types to check in full; MOR snapshots need log merging.
const onlyCow = process.env.HUDI_EDGE_WASM_COW_ONLY === '1';

function zips(dir) {
  return readdirSync(dir).flatMap((n) => {
    const p = join(dir, n);
    return statSync(p).isDirectory() ? zips(p) : n.endsWith('.zip') ? [p] : [];
  });
}

const keyOf = (row, keyFields) => {
  if (typeof row._hoodie_record_key === 'string') return row._hoodie_record_key;
  const t = (v) => (v === null || v === undefined ? '' : typeof v === 'string' ? v : JSON.stringify(v));
  return keyFields.length === 1 ? t(row[keyFields[0]]) : keyFields.map((f) => `${f}:${t(row[f])}`).join(',');
};
const canonical = (rows, keyFields) =>
  rows
    .map((r) => [keyOf(r, keyFields), r._hoodie_partition_path ?? '', JSON.stringify(r), r])
    .sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : a[1] < b[1] ? -1 : a[1] > b[1] ? 1 : a[2] < b[2] ? -1 : a[2] > b[2] ? 1 : 0))
    .map((x) => x[3]);
const pairs = (rows, keyFields) => canonical(rows, keyFields).map((r) => [keyOf(r, keyFields), r._hoodie_partition_path ?? '']).sort();

// D4 (see tests/fixtures.rs): time travel reads with the schema as of the instant.
const schemaChanged = {
  'sample_table/cow/v9_timebasedkeygen_epochmillis': ['ts_millis'],
  'sample_table/cow/v9_timebasedkeygen_unixtimestamp': ['ts_epoch'],
};

async function readRows(table, options) {
  return JSON.parse(await table.readJson(JSON.stringify(options), true));
}

async function check(name, table, exp) {
  const keys = exp.table.record_key_fields ?? [];
  const hasMeta = exp.table.populate_meta_fields !== false;
  const v8plus = exp.table.table_version >= 8;
  const lenient = schemaChanged[name] ?? [];
  const sameRows = (got, want, what) => {
    const g = canonical(got, keys).map((r) => {
      const c = { ...r };
      for (const col of lenient) if (typeof c[col] === 'number') c[col] = String(c[col]);
      return c;
    });
    const w = canonical(want, keys);
    assert.equal(g.length, w.length, `${name} ${what}: row count`);
    assert.deepEqual(g, w, `${name} ${what}`);
  };

  const timeline = JSON.parse(await table.timeline(false));
  const completed = timeline.instants.filter((i) => i.state === 'completed').map((i) => [i.requested_time, i.action]);
  assert.deepEqual(completed, exp.timeline_folder.completed.map((c) => [c.instant_time, c.action]), `${name}: timeline`);

  sameRows(await readRows(table, {}), exp.snapshot.rows, 'snapshot');
  for (const tt of exp.time_travel) sameRows(await readRows(table, { asOf: tt.as_of }), tt.rows, `as of ${tt.as_of}`);
  for (const r of (v8plus ? exp.incremental_by_completion_time : exp.incremental) ?? []) {
    const options = { query: 'incremental', start: r.start, ...(r.end ? { end: r.end } : {}) };
    if (!hasMeta) {
      await assert.rejects(readRows(table, options), (e) => e.code === 'UNSUPPORTED');
      continue;
    }
    const got = await readRows(table, options);
    assert.deepEqual(pairs(got, keys), [...r.keys_with_partition].sort(), `${name}: incremental (${r.start}, ${r.end}]`);
  }
  if (exp.read_optimized) sameRows(await readRows(table, { query: 'read_optimized' }), exp.read_optimized.rows, 'read-optimized');
  for (const f of exp.filters ?? []) {
    const got = await readRows(table, { filters: f.filters });
    const want = f.python_filter_of_snapshot_keys.map(([k, p]) => [k, hasMeta ? p : '']).sort();
    assert.deepEqual(pairs(got, keys), want, `${name}: filter ${JSON.stringify(f.filters)}`);
  }
}

for (const zip of zips(join(fixtures, 'tables')).sort()) {
  const name = relative(join(fixtures, 'tables'), zip).replace(/\.zip$/, '');
  const exp = JSON.parse(readFileSync(join(fixtures, 'expected', `${name}.json`), 'utf8'));
  const isMor = exp.table.table_type === 'MERGE_ON_READ';
  test(`wasm: ${name}`, { skip: onlyCow && isMor ? 'MOR skipped (HUDI_EDGE_WASM_COW_ONLY=1)' : false }, async () => {
    const bytes = readFileSync(zip);
    if (name.includes('lance')) {
      await assert.rejects(WasmTable.openZip(bytes, name), (e) => e.code === 'UNSUPPORTED' && /LANCE/.test(e.message));
      return;
    }
    const table = await WasmTable.openZip(bytes, name);
    await check(name, table, exp);
  });
}

// The JsStorage path: a storage written in JS over node:fs, as an application would plug in.
function fsStorage(root) {
  return {
    location: `file://${root}`,
    async get(path, start, end) {
      if (start === undefined) return new Uint8Array(await readFile(join(root, path)));
      const fh = await open(join(root, path));
      try {
        const size = (await fh.stat()).size;
        const len = Math.max(0, Math.min(end, size) - start);
        const buf = new Uint8Array(len);
        await fh.read(buf, 0, len, start);
        return buf;
      } finally {
        await fh.close();
      }
    },
    async head(path) {
      const s = await stat(join(root, path));
      if (s.isDirectory()) throw Object.assign(new Error(`${path} is a directory`), { code: 'ENOENT' });
      return { path, size: s.size, lastModified: s.mtimeMs };
    },
    async list(prefix, recursive) {
      const out = [];
      const walk = async (dir) => {
        let entries;
        try {
          entries = await readdir(join(root, dir), { withFileTypes: true });
        } catch (e) {
          if (e.code === 'ENOENT') return;
          throw e;
        }
        for (const e of entries) {
          const p = dir ? `${dir}/${e.name}` : e.name;
          if (e.isDirectory()) {
            if (recursive) await walk(p);
            else out.push({ path: p, size: 0, isDir: true });
          } else {
            const s = await stat(join(root, p));
            out.push({ path: p, size: s.size, lastModified: s.mtimeMs });
          }
        }
      };
      await walk(prefix);
      return out;
    },
  };
}

for (const name of ['sample_table/cow/v6_complexkeygen_hivestyle', 'sample_table/cow/v9_txns_simple_meta']) {
  test(`wasm over a JS fs storage: ${name}`, async () => {
    const dir = mkdtempSync(join(tmpdir(), 'hudi-edge-js-'));
    execFileSync('unzip', ['-q', join(fixtures, 'tables', `${name}.zip`), '-d', dir]);
    const top = readdirSync(dir).find((n) => n !== '__MACOSX');
    const exp = JSON.parse(readFileSync(join(fixtures, 'expected', `${name}.json`), 'utf8'));
    const table = await WasmTable.openJs(fsStorage(join(dir, top)));
    await check(name, table, exp);
    const io = JSON.parse(table.io());
    assert.ok(io.requests > 0 && io.bytes > 0, 'requests are counted');
  });
}
