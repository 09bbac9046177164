// One wasm writer in Node for tests/write/multi_writer.py --engine wasm: commits each batch
// file (JSON lines) in turn as an upsert through WasmTable.write over S3 (the loopback
// server) or local files, with Hudi's multi-writer options, and prints one JSON line per
// commit: {start, end, code, result | error}. The lock's renewal and the write's heartbeat
// run on this process's event loop (setTimeout), no threads.
//
//   node multi_writer.mjs CONFIG_JSON BATCH...
//   CONFIG_JSON: {"url", "s3": {endpoint, region, accessKeyId, secretAccessKey} | null,
//                 "root": local table dir | null, "options": {...}, "commitRetries": n}
import { readFileSync } from 'node:fs';
import { join, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createRequire } from 'node:module';
import { tableFromJSON, tableToIPC } from 'apache-arrow';
import { fsStorage } from './fs_storage.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const repo = join(here, '..', '..');
const wasmDir = process.env.HUDI_EDGE_WASM_NODE ?? join(process.env.CARGO_TARGET_DIR ?? join(repo, 'target'), 'wasm-node');
const require = createRequire(import.meta.url);
const { WasmTable } = require(join(wasmDir, 'hudi_edge.js'));

const [configJson, ...batches] = process.argv.slice(2);
const config = JSON.parse(configJson);

async function open() {
  if (config.root) return WasmTable.openJs(fsStorage(config.root));
  return WasmTable.openUrl(config.url, { s3: { ...config.s3, forcePathStyle: true } });
}

for (const path of batches) {
  const rows = readFileSync(path, 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l));
  const start = Date.now() / 1000;
  let record;
  try {
    // A fresh handle per commit, as a worker serving one request would.
    const table = await open();
    const result = await table.write(tableToIPC(tableFromJSON(rows), 'stream'), {
      operation: 'upsert',
      options: config.options,
      commitRetries: config.commitRetries,
    });
    record = { code: 0, result };
  } catch (e) {
    record = { code: 1, error: `error[${e.code ?? 'JS'}]: ${e.message ?? e}` };
  }
  record.start = start;
  record.end = Date.now() / 1000;
  process.stdout.write(JSON.stringify(record) + '\n');
}
