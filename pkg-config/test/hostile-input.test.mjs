// Rows from the least trusted place: what the package refuses before the engine writes
// anything — partition values that would leave the table, rows and inputs past the write's
// size limits, Arrow IPC whose buffers lie about their lengths — each a typed error, with
// the wasm module alive for the next call.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { HudiTable, InvalidInputError, InvalidArgumentError } from 'hudi-edge';
import { tempDir } from '../../tests/lib/harness.mjs';

const scratch = tempDir('pkg-hostile');
after(() => rmSync(scratch, { recursive: true, force: true }));

const SPEC = { columns: 'id STRING NOT NULL, ts BIGINT, region STRING, note STRING', recordKey: 'id', partitionBy: 'region', orderingFields: 'ts', type: 'mor' };
const row = (id, region, note = 'n') => ({ id, ts: 1n, region, note });

/** Every file under `dir` (the timeline included): a refused write adds none. */
function files(dir) {
  return readdirSync(dir, { recursive: true }).sort();
}

test('refused before any write: partition values leaving the table, rows and inputs past the limits', async () => {
  const dir = join(scratch, 'events');
  const t = await HudiTable.create(dir, SPEC);
  await t.upsert([row('a', 'eu')]);
  const before = files(dir);
  await assert.rejects(t.upsert([row('b', 'eu'), row('c', '../../x')]), (e) => e instanceof InvalidInputError && /row 1, column "region"/.test(e.message) && /partition path/.test(e.message));
  await assert.rejects(t.upsert([row('d', 'us//west')]), InvalidInputError);
  // A row past hudi-edge.write.max.row.bytes, and an input past hudi-edge.write.max.input.bytes.
  await assert.rejects(t.upsert([row('e', 'eu', 'x'.repeat(3 << 20))]), (e) => e instanceof InvalidInputError && /row 0 is .*the limit is 2 MiB/.test(e.message) && /hudi-edge.write.max.row.bytes/.test(e.message));
  await assert.rejects(t.upsert([row('f', 'eu', 'y'.repeat(5000))], { options: { 'hudi-edge.write.max.input.bytes': '1000' } }), (e) => e instanceof InvalidInputError && /hudi-edge.write.max.input.bytes/.test(e.message));
  await assert.rejects(t.upsert([row('g', 'eu')], { options: { 'hudi-edge.write.max.row.bytes': 'lots' } }), InvalidArgumentError);
  // Objects past hudi-edge.write.max.objects.bytes (6 MiB of Arrow by default) are refused
  // while they are converted, whatever the engine's own input limit.
  const many = Array.from({ length: 60_000 }, (_, i) => row(`big-${i}`, 'eu', 'z'.repeat(100)));
  await assert.rejects(t.upsert(many), (e) => e instanceof InvalidInputError && /60000 rows given as objects come to more than 6 MiB as Arrow/.test(e.message) && /hudi-edge.write.max.objects.bytes/.test(e.message));
  await assert.rejects(t.upsert(many.slice(0, 100), { options: { 'hudi-edge.write.max.objects.bytes': '4096' } }), (e) => e instanceof InvalidInputError && /more than 4096 bytes as Arrow/.test(e.message));
  await assert.rejects(t.upsert([row('g', 'eu')], { options: { 'hudi-edge.write.max.objects.bytes': '0' } }), (e) => e instanceof InvalidArgumentError && /max.objects.bytes/.test(e.message));
  assert.deepEqual(files(dir), before, 'nothing was written for a refused write');
  // The module lives on: the next write commits.
  const ok = await t.upsert([row('h', 'us/west')]);
  assert.equal(ok.inserted, 1);
  assert.deepEqual((await t.rows()).map((r) => r.id).sort(), ['a', 'h']);
  t.close();
});
