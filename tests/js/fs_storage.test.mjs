// The benches' indexed listing (`fsStorage(root, { listIndex: true })`) answers what the
// directory walk answers, for every directory of a table-shaped tree, recursive or not.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fsStorage } from './fs_storage.mjs';

const files = [
  '.hoodie/hoodie.properties',
  '.hoodie/timeline/20240101000000000.commit.requested',
  '.hoodie/timeline/20240101000000000_20240101000001000.commit',
  '.hoodie/timeline/history/.gitkeep',
  '.hoodie/metadata/.hoodie/hoodie.properties',
  '.hoodie/metadata/files/.files-0000-0_20240101000000000.log.1_0-1-1',
  '.hoodie/metadata/files/files-0000-0_0-1-1_20240101000000000.hfile',
  'region=eu/a-0_0-1-1_20240101000000000.parquet',
  'region=eu/.hoodie_partition_metadata',
  'region=us/b-0_0-1-1_20240101000000000.parquet',
  'region=us-east/c-0_0-1-1_20240101000000000.parquet',
];

const sorted = (listing) => listing.map((m) => [m.path, m.size, m.lastModified, m.isDir === true]).sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0));

test('indexed listings are the walk’s', async () => {
  const root = mkdtempSync(join(tmpdir(), 'fs-storage-index-'));
  try {
    files.forEach((f, i) => {
      mkdirSync(join(root, f, '..'), { recursive: true });
      writeFileSync(join(root, f), 'x'.repeat(i));
    });
    const walk = fsStorage(root, { readOnly: true });
    const index = fsStorage(root, { listIndex: true });
    assert.equal(index.put, undefined, 'the indexed storage is read-only');
    const dirs = ['', '.hoodie', '.hoodie/timeline', '.hoodie/timeline/history', '.hoodie/metadata', '.hoodie/metadata/files', 'region=eu', 'region=us', 'missing', 'region'];
    for (const dir of dirs) {
      for (const recursive of [false, true]) {
        const want = sorted(await walk.list(dir, recursive));
        assert.deepEqual(sorted(await index.list(dir, recursive)), want, `${dir || '(root)'} recursive=${recursive}`);
        if (dir === '.hoodie/metadata' && recursive) assert.equal(want.length, 3);
      }
    }
    for (const after of ['', '.hoodie/timeline/2', 'region=eu/', 'region=us', 'z']) {
      assert.deepEqual(sorted(await index.listAfter(after)), sorted(await walk.listAfter(after)), `after ${after}`);
    }
    // Answers are copies: a caller editing one leaves the index as it was.
    (await index.list('region=eu', false))[0].path = 'edited';
    assert.deepEqual(sorted(await index.list('region=eu', false)), sorted(await walk.list('region=eu', false)));
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
});
