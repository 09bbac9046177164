// The wasm build in Node: every fixture table read through the same expectations as the
// native tests (snapshot, time travel, incremental, read-optimized, filters). Tables are
// handed in as zip bytes (in-memory storage) and, for a few, through a Node fs-backed
// storage implemented in JS (the JsStorage path).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, readdirSync, statSync, mkdtempSync } from 'node:fs';
import { fsStorage } from './fs_storage.mjs';
import { join, relative, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createRequire } from 'node:module';
import { execFileSync } from 'node:child_process';
import { tmpdir } from 'node:os';
import { check, allowance } from './fixture_checks.mjs';
import { allowances } from './expected.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const repo = join(here, '..', '..');
const fixtures = process.env.HUDI_EDGE_FIXTURES ?? join(repo, 'tests', 'data', 'fixtures');
const wasmDir = process.env.HUDI_EDGE_WASM_NODE ?? join(process.env.CARGO_TARGET_DIR ?? join(repo, 'target'), 'wasm-node');
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

for (const zip of zips(join(fixtures, 'tables')).sort()) {
  const name = relative(join(fixtures, 'tables'), zip).replace(/\.zip$/, '');
  const exp = JSON.parse(readFileSync(join(fixtures, 'expected', `${name}.json`), 'utf8'));
  const isMor = exp.table.table_type === 'MERGE_ON_READ';
  test(`wasm: ${name}`, { skip: onlyCow && isMor ? 'MOR skipped (HUDI_EDGE_WASM_COW_ONLY=1)' : false }, async () => {
    const bytes = readFileSync(zip);
    const refused = allowance(allowances, 'unsupported_base_file_format', name, exp, 'open');
    if (refused) {
      await assert.rejects(WasmTable.openZip(bytes, name), (e) => e.code === refused.error.code && e.message.includes(refused.error.message_contains));
      return;
    }
    const table = await WasmTable.openZip(bytes, name);
    await check(name, table, exp, allowances);
  });
}

for (const name of ['sample_table/cow/v6_complexkeygen_hivestyle', 'sample_table/cow/v9_txns_simple_meta']) {
  test(`wasm over a JS fs storage: ${name}`, async () => {
    const dir = mkdtempSync(join(tmpdir(), 'hudi-edge-js-'));
    execFileSync('unzip', ['-q', join(fixtures, 'tables', `${name}.zip`), '-d', dir]);
    const top = readdirSync(dir).find((n) => n !== '__MACOSX');
    const exp = JSON.parse(readFileSync(join(fixtures, 'expected', `${name}.json`), 'utf8'));
    const table = await WasmTable.openJs(fsStorage(join(dir, top)));
    await check(name, table, exp, allowances);
    const io = table.io();
    assert.ok(io.requests > 0 && io.bytes > 0, 'requests are counted');
  });
}

test('an abort drops the read: the JS storage sees its requests aborted, progress comes from the engine', async () => {
  const name = 'sample_table/cow/v9_txns_simple_meta';
  const dir = mkdtempSync(join(tmpdir(), 'hudi-edge-js-'));
  execFileSync('unzip', ['-q', join(fixtures, 'tables', `${name}.zip`), '-d', dir]);
  const top = readdirSync(dir).find((n) => n !== '__MACOSX');
  const fs = fsStorage(join(dir, top));
  const stalled = [];
  const controller = new AbortController();
  // Data files never arrive: the read waits until it is aborted (once it asked for one).
  const storage = {
    ...fs,
    get(path, start, end, signal) {
      if (!path.endsWith('.parquet')) return fs.get(path, start, end);
      stalled.push(signal);
      // Aborted once the engine waits on a data file (after this call returns), not by a timer.
      queueMicrotask(() => controller.abort());
      return new Promise(() => {});
    },
  };
  const table = await WasmTable.openJs(storage);
  const progress = [];
  const reading = table.readArrow({}, controller.signal, (p) => progress.push(p));
  await assert.rejects(reading, (e) => e.code === 'ABORTED');
  assert.ok(progress.length === 1 && progress[0].filesTotal > 0 && progress[0].filesDone === 0, JSON.stringify(progress));
  assert.ok(stalled.length > 0 && stalled.every((s) => s instanceof AbortSignal && s.aborted), 'every stalled request was aborted');
});
