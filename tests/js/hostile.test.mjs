// Hostile tables in wasm: damage that once aborted the module or inflated to gigabytes must
// arrive as a typed error, with the module's linear memory (it only grows) staying below an
// edge isolate's 128 MB. Tables are real fixtures with one file replaced, in memory.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, readdirSync, statSync, mkdtempSync } from 'node:fs';
import { join, relative, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createRequire } from 'node:module';
import { execFileSync } from 'node:child_process';
import { tmpdir } from 'node:os';
import { deflateRawSync } from 'node:zlib';

const here = dirname(fileURLToPath(import.meta.url));
const repo = join(here, '..', '..');
const fixtures = process.env.HUDI_EDGE_FIXTURES ?? join(repo, 'tests', 'data', 'fixtures');
const wasmDir = process.env.HUDI_EDGE_WASM_NODE ?? join(process.env.CARGO_TARGET_DIR ?? join(repo, 'target'), 'wasm-node');
const require = createRequire(import.meta.url);
const { WasmTable, memoryBytes } = require(join(wasmDir, 'hudi_edge.js'));

const TABLE = 'sample_table/cow/v9_txns_simple_meta';
const MB = 1024 * 1024;

/** The fixture's files as `[path, bytes]`, paths relative to the table root. */
function tableFiles() {
  const dir = mkdtempSync(join(tmpdir(), 'hudi-edge-hostile-'));
  execFileSync('unzip', ['-q', join(fixtures, 'tables', `${TABLE}.zip`), '-d', dir]);
  const root = join(dir, readdirSync(dir).find((n) => n !== '__MACOSX'));
  const walk = (d) =>
    readdirSync(d).flatMap((n) => (statSync(join(d, n)).isDirectory() ? walk(join(d, n)) : [join(d, n)]));
  return new Map(walk(root).map((p) => [relative(root, p), readFileSync(p)]));
}

function open(files) {
  return WasmTable.openFiles([...files].map(([p, b]) => [p, new Uint8Array(b)]));
}

/** Avro `long` (zig-zag varint). */
function long(n) {
  let v = BigInt(n);
  v = v >= 0n ? v << 1n : (-v << 1n) - 1n;
  const out = [];
  do {
    let b = Number(v & 0x7fn);
    v >>= 7n;
    if (v > 0n) b |= 0x80;
    out.push(b);
  } while (v > 0n);
  return Buffer.from(out);
}

const avroBytes = (b) => Buffer.concat([long(b.length), b]);

/** An Avro object container: `schema`, `codec`, and one block of `count` records. */
function container(schema, codec, count, block) {
  const sync = Buffer.alloc(16, 7);
  const meta = Buffer.concat([
    long(2),
    avroBytes(Buffer.from('avro.schema')),
    avroBytes(Buffer.from(JSON.stringify(schema))),
    avroBytes(Buffer.from('avro.codec')),
    avroBytes(Buffer.from(codec)),
    long(0),
  ]);
  return Buffer.concat([Buffer.from('Obj\x01', 'latin1'), meta, sync, long(count), long(block.length), block, sync]);
}

/** The newest completed commit's instant file. */
function latestCommit(files) {
  return [...files.keys()]
    .filter((p) => /^\.hoodie\/timeline\/\d+_\d+\.(commit|deltacommit)$/.test(p))
    .sort()
    .at(-1);
}

/** The module's whole linear memory stays under what an edge isolate allows. */
function assertUnderIsolateLimit() {
  assert.ok(memoryBytes() < 128 * MB, `wasm memory is ${memoryBytes() / MB} MiB`);
}

test('a deflate bomb in an instant file is CORRUPT, without inflating it', async () => {
  const files = tableFiles();
  const commit = latestCommit(files);
  const schema = { type: 'record', name: 'r', fields: [{ name: 'b', type: 'bytes' }] };
  // 512 MiB of zeros in half a megabyte.
  const bomb = deflateRawSync(Buffer.alloc(512 * MB), { level: 9 });
  files.set(commit, container(schema, 'deflate', 1, bomb));
  const table = await open(files);
  await assert.rejects(table.plan({}), (e) => e.code === 'CORRUPT' && e.message.includes(commit));
  assertUnderIsolateLimit();
});

test('a recursive Avro schema in an instant file is UNSUPPORTED, not a stack overflow', async () => {
  const files = tableFiles();
  const commit = latestCommit(files);
  const node = { type: 'record', name: 'Node', fields: [{ name: 'next', type: ['null', 'Node'] }] };
  files.set(commit, container(node, 'null', 1, Buffer.from([2, 2, 2, 0])));
  const table = await open(files);
  await assert.rejects(table.plan({}), (e) => e.code === 'UNSUPPORTED' && /recursive/.test(e.message));
  // The module still works afterwards (an abort would have killed it).
  const ok = await open(tableFiles());
  assert.ok((await ok.plan({})).fileSlices.length > 0);
  assertUnderIsolateLimit();
});

test('an array count no bytes back is CORRUPT before anything is allocated for it', async () => {
  const files = tableFiles();
  const commit = latestCommit(files);
  const schema = { type: 'record', name: 'r', fields: [{ name: 'a', type: { type: 'array', items: 'long' } }] };
  files.set(commit, container(schema, 'null', 1, Buffer.concat([long(2 ** 40), long(1)])));
  const table = await open(files);
  await assert.rejects(table.plan({}), (e) => e.code === 'CORRUPT');
  assertUnderIsolateLimit();
});

test('timeline folders outside .hoodie are refused as CORRUPT hoodie.properties', async () => {
  for (const [path, why] of [
    ['../../etc', /leaves the table/],
    ['../partition', /outside .hoodie/],
  ]) {
    const files = tableFiles();
    const props = files.get('.hoodie/hoodie.properties').toString('latin1');
    files.set(
      '.hoodie/hoodie.properties',
      Buffer.from(props.replace('hoodie.timeline.path=timeline', `hoodie.timeline.path=${path}`), 'latin1'),
    );
    await assert.rejects(
      open(files),
      (e) => e.code === 'CORRUPT' && e.message.startsWith('.hoodie/hoodie.properties') && why.test(e.message),
    );
  }
});
