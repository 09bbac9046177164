// Builds a table's metadata table (files, column_stats, partition_stats, record_index) with
// the npm package in Node over local files, and prints what `index()` reports as JSON.
// Usage: node tests/bench/mdt_init_wasm.mjs TABLE_DIR (after the package's build).
import { join, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { fsStorage } from '../js/fs_storage.mjs';

const repo = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const { HudiTable } = await import(join(repo, 'pkg-config', 'dist', 'node.js'));
const [dir] = process.argv.slice(2);
const t = await HudiTable.openStorage(fsStorage(dir));
const built = await t.index({ partitions: ['files', 'column_stats', 'record_index'] });
t.close();
console.log(JSON.stringify(built));
