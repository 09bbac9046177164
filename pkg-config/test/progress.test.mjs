// Progress events and memory: running totals per operation, files done / total, a throwing
// callback, wasm memory released by close() and bounded over many reads and streams.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { HudiTable, wasmMemoryBytes } from 'hudi-edge';
import { V9, V9_MOR, useNginx } from './helpers.mjs';

const server = useNginx();

test('onProgress: open, plan and reads report growing totals that end at the files read', async () => {
  const opened = [];
  const t = await HudiTable.open(`${server.url}/tables/${V9_MOR}`, { onProgress: (p) => opened.push(p) });
  assert.ok(opened.length > 0 && opened.at(-1).requests >= 2, 'open reports its requests');

  const plan = await t.plan();
  const files = plan.fileSlices.reduce((n, s) => n + (s.baseFile ? 1 : 0) + s.logFiles.length, 0);
  assert.ok(files > 0);

  const seen = [];
  const rows = await t.rows({ onProgress: (p) => seen.push(p) });
  assert.ok(rows.length > 0 && seen.length > 1);
  for (let i = 1; i < seen.length; i++) {
    assert.ok(seen[i].requests >= seen[i - 1].requests && seen[i].bytes >= seen[i - 1].bytes, 'totals never go down');
    assert.ok(seen[i].filesDone >= seen[i - 1].filesDone);
  }
  const last = seen.at(-1);
  assert.deepEqual(Object.keys(last).sort(), ['bytes', 'filesDone', 'filesTotal', 'requests']);
  assert.equal(last.filesTotal, files);
  assert.equal(last.filesDone, files);
  assert.ok(last.bytes > 0 && last.requests >= files);

  const planned = [];
  await t.plan({ filters: [['region', '=', 'us']], onProgress: (p) => planned.push(p) });
  assert.ok(planned.length > 0);

  const streamed = [];
  let n = 0;
  for await (const b of t.stream({ onProgress: (p) => streamed.push(p) })) n += b.numRows;
  assert.equal(n, rows.length);
  assert.ok(streamed.length > 0 && streamed.at(-1).filesDone === files);
});

test('a throwing onProgress does not break the read', async () => {
  const t = await HudiTable.open(`${server.url}/tables/${V9}`);
  const rows = await t.rows({
    onProgress: () => {
      throw new Error('callback bug');
    },
  });
  assert.equal(rows.length, 12);
});

test('memory: close() frees a table; many opens, reads and streams stay within bounds', async () => {
  const url = `${server.url}/tables/${V9}`;
  const round = async () => {
    const t = await HudiTable.open(url);
    await t.read();
    for await (const b of t.stream({ batchSize: 2 })) assert.ok(b.numRows <= 2);
    await t.rows({ limit: 3 });
    t.close();
  };
  for (let i = 0; i < 3; i++) await round(); // warm up: the allocator settles
  const settled = wasmMemoryBytes();
  for (let i = 0; i < 15; i++) await round();
  const grown = wasmMemoryBytes() - settled;
  assert.ok(grown <= 4 * 1024 * 1024, `wasm memory grew by ${grown} bytes over 15 rounds`);

  // close() while a call is in flight: the call completes, then the table is freed.
  const t = await HudiTable.open(url);
  const pending = t.rows();
  t.close();
  assert.equal((await pending).length, 12);
  await assert.rejects(t.timeline(), { code: 'INVALID_ARGUMENT' });
  t.close(); // twice is fine
});

test('stream: breaking out early stops the read', async () => {
  const t = await HudiTable.open(`${server.url}/tables/${V9_MOR}`);
  let batches = 0;
  for await (const b of t.stream({ batchSize: 1 })) {
    assert.equal(b.numRows, 1);
    if (++batches === 2) break;
  }
  assert.equal(batches, 2);
  assert.ok((await t.rows({ limit: 1 })).length === 1, 'the table is still usable');
});
