// Hostile tables in wasm: damage that once aborted the module or inflated to gigabytes must
// arrive as a typed error, with the module's linear memory (it only grows) capped at an edge
// isolate's 128 MB. Tables are real fixtures with one file replaced, in memory or behind a JS
// storage.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, readdirSync, statSync, mkdtempSync, copyFileSync, writeFileSync, rmSync } from 'node:fs';
import { join, relative, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { deflateRawSync } from 'node:zlib';
import { fsStorage } from './fs_storage.mjs';
import { tableCopy } from '../lib/fixtures.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const repo = join(here, '..', '..');
const fixtures = process.env.HUDI_EDGE_FIXTURES ?? join(repo, 'tests', 'data', 'fixtures');
const wasmDir = process.env.HUDI_EDGE_WASM_NODE ?? join(process.env.CARGO_TARGET_DIR ?? join(repo, 'target'), 'wasm-node');
const require = createRequire(import.meta.url);
const MB = 1024 * 1024;

/** Unsigned LEB128. */
function leb(n) {
  const out = [];
  do {
    let b = n & 0x7f;
    n = Math.floor(n / 128);
    if (n > 0) b |= 0x80;
    out.push(b);
  } while (n > 0);
  return Buffer.from(out);
}

/** Reads an unsigned LEB128 at `at`: `[value, next]`. */
function readLeb(bytes, at) {
  let value = 0;
  for (let shift = 1; ; shift *= 128) {
    const b = bytes[at++];
    value += (b & 0x7f) * shift;
    if (b < 0x80) return [value, at];
  }
}

/**
 * The module with a maximum on its memory. wasm-bindgen modules define their own memory, so a
 * `WebAssembly.Memory` cannot be handed in; the memory section of a copy is given the maximum
 * instead (a few bytes, no rebuild), and past it `memory.grow` fails as an isolate's would.
 */
function withMemoryMaximum(maxBytes) {
  const dir = mkdtempSync(join(tmpdir(), 'hudi-edge-max-memory-'));
  for (const f of readdirSync(wasmDir)) copyFileSync(join(wasmDir, f), join(dir, f));
  const file = join(dir, 'hudi_edge_bg.wasm');
  const bytes = readFileSync(file);
  const parts = [bytes.subarray(0, 8)];
  let patched = false;
  for (let at = 8; at < bytes.length; ) {
    const id = bytes[at];
    const [size, body] = readLeb(bytes, at + 1);
    if (id === 5) {
      const [count, first] = readLeb(bytes, body);
      assert.equal(count, 1, 'one memory');
      assert.equal(bytes[first] & ~1, 0, 'a 32-bit unshared memory');
      const [min] = readLeb(bytes, first + 1);
      const payload = Buffer.concat([leb(1), Buffer.from([1]), leb(min), leb(maxBytes / 65536)]);
      parts.push(Buffer.from([5]), leb(payload.length), payload);
      patched = true;
    } else {
      parts.push(bytes.subarray(at, body + size));
    }
    at = body + size;
  }
  assert.ok(patched, 'the module defines its memory');
  writeFileSync(file, Buffer.concat(parts));
  const module = require(join(dir, 'hudi_edge.js'));
  rmSync(dir, { recursive: true, force: true }); // loaded: the glue read the module at once
  return module;
}

// Every test below runs under an edge isolate's 128 MiB: allocating past it would abort the
// module (a `RuntimeError`), which no test accepts.
const { WasmTable, memoryBytes } = withMemoryMaximum(128 * MB);

const TABLE = 'sample_table/cow/v9_txns_simple_meta';

/** A fixture unzipped into a temporary folder: its root. */
const tableDir = (name = TABLE) => tableCopy(name, 'hostile');

/** The fixture's files as `[path, bytes]`, paths relative to the table root. */
function tableFiles(name = TABLE) {
  const root = tableDir(name);
  const walk = (d) =>
    readdirSync(d).flatMap((n) => (statSync(join(d, n)).isDirectory() ? walk(join(d, n)) : [join(d, n)]));
  const files = new Map(walk(root).map((p) => [relative(root, p), readFileSync(p)]));
  rmSync(dirname(root), { recursive: true, force: true });
  return files;
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

test('the memory maximum holds: past it the module aborts, as it would in an isolate', () => {
  // A fresh instance: an abort leaves an instance unusable. The glue copies a string argument
  // into the module before the call, so the allocation fails synchronously.
  const capped = withMemoryMaximum(128 * MB);
  assert.throws(() => capped.WasmTable.openUrl('x'.repeat(160 * MB)), WebAssembly.RuntimeError);
});

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

test('a damaged map column in a base file is CORRUPT, not an abort', async () => {
  // The fuzz finding (tests/fuzz/regressions/parquet_footer): the parquet crate's map reader
  // unwrapped the error of keys and values of different lengths; the value column's damaged
  // definition levels are now found before the crate decodes them.
  const files = tableFiles('sample_table/mor/parquet/v6_simplekeygen_hivestyle_no_metafields');
  const seed = readFileSync(join(repo, 'tests/fuzz/corpus/parquet_footer/v6_base.parquet'));
  const base = [...files.keys()].find((p) => files.get(p).equals(seed));
  assert.ok(base, 'the fuzz seed is a base file of the table');
  files.set(base, readFileSync(join(repo, 'tests/fuzz/regressions/parquet_footer/map_inner_error_unwrapped.parquet')));
  const table = await open(files);
  await assert.rejects(
    table.readArrow({}),
    (e) => e.code === 'CORRUPT' && e.message.includes(base) && /column mapField\.key_value\.value\.map_field_value_struct_f2: page 0: definition levels/.test(e.message),
  );
  const ok = await open(tableFiles());
  assert.ok((await ok.plan({})).fileSlices.length > 0);
});

/** A Parquet file with no rows whose schema is `groups` optional groups nested in each other. */
function deepSchemaParquet(groups) {
  const footer = Buffer.concat([
    // FileMetaData: version 1; schema: a list of `groups + 2` elements.
    Buffer.from([0x15, 0x02, 0x19, 0xfc]),
    leb(groups + 2),
    Buffer.from([0x48, 0x01, 0x72, 0x15, 0x02, 0x00]), // root "r", one child
    Buffer.alloc(groups * 8).map((_, i) => [0x35, 0x02, 0x18, 0x01, 0x61, 0x15, 0x02, 0x00][i % 8]),
    Buffer.from([0x15, 0x02, 0x25, 0x00, 0x18, 0x01, 0x78, 0x00]), // required int32 "x"
    Buffer.from([0x16, 0x00, 0x19, 0x0c, 0x00]), // num_rows 0, no row groups
  ]);
  const len = Buffer.alloc(4);
  len.writeUInt32LE(footer.length);
  return Buffer.concat([Buffer.from('PAR1'), footer, len, Buffer.from('PAR1')]);
}

test('a base file whose schema nests 100,000 levels is CORRUPT, not a stack overflow', async () => {
  const files = tableFiles();
  const deep = deepSchemaParquet(100_000);
  const bases = [...files.keys()].filter((p) => p.endsWith('.parquet') && !p.startsWith('.hoodie/'));
  assert.ok(bases.length > 0);
  for (const p of bases) files.set(p, deep);
  const table = await open(files);
  // Planned by listing, which shows the new files' sizes; the metadata table still lists the
  // replaced files' sizes, and a footer is read at the size the plan knows (as Hudi reads it).
  await assert.rejects(
    table.readArrow({ useMetadataTable: false }),
    (e) => e.code === 'CORRUPT' && /schema nested deeper than 64/.test(e.message),
  );
  await assert.rejects(
    table.readArrow({}),
    (e) => e.code === 'CORRUPT' && bases.some((p) => e.message.startsWith(p)) && /footer magic at the \d+ bytes the table lists/.test(e.message),
  );
  assertUnderIsolateLimit();
});

/** The fixture behind `fsStorage`, the folder removed after the test. */
function tableStorage(t) {
  const root = tableDir();
  t.after(() => rmSync(dirname(root), { recursive: true, force: true }));
  return fsStorage(root);
}

test('a JS storage answering more than a range asked for is IO', async (t) => {
  const fs = tableStorage(t);
  // Every ranged read answered with the whole object.
  const greedy = { ...fs, get: (path) => fs.get(path) };
  const read = async () => (await WasmTable.openJs(greedy)).readArrow({});
  await assert.rejects(read(), (e) => e.code === 'IO' && /longer than the \d+ bytes asked for/.test(e.message));
  assertUnderIsolateLimit();
});

test('a JS storage answering a whole object over 256 MiB, or no bytes, is refused before copying it in', async (t) => {
  const fs = tableStorage(t);
  const commit = latestCommit(tableFiles());
  for (const [answer, code, why] of [
    [() => new Uint8Array(257 * MB), 'UNSUPPORTED', /over 256 MiB/],
    // `new Uint8Array(2 ** 30)` would have been made of it.
    [() => 2 ** 30, 'IO', /other than bytes/],
  ]) {
    // The instant is read whole (`get(path)`).
    const storage = { ...fs, get: (path, start, end) => (path === commit && start === undefined ? answer() : fs.get(path, start, end)) };
    const read = async () => (await WasmTable.openJs(storage)).plan({});
    await assert.rejects(read(), (e) => e.code === code && why.test(e.message) && e.message.includes(commit));
    assertUnderIsolateLimit();
  }
});
