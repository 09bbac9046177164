// A static host that cannot list (python's http.server: HTML directory pages) is reported as
// what it is — UNSUPPORTED, naming the missing listing and the manifest that replaces it — not
// as a damaged table; `writeManifest` over the local copy makes the same host serve the table.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { cpSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { HudiTable, UnsupportedError, CorruptError, writeManifest, MANIFEST_PATH } from 'hudi-edge';
import { unzippedFixtures } from '../../tests/web/lib/servers.mjs';
import { freePort, launch, tempDir, waitFor } from '../../tests/lib/harness.mjs';
import { V9, V9_MOR, expected, sameRows } from './helpers.mjs';

const root = tempDir('pkg-static');
let server;
let url;

before(async () => {
  for (const name of [V9, V9_MOR]) {
    const dir = join(root, name.replaceAll('/', '_'));
    cpSync(join(unzippedFixtures(), 'tables', name), dir, { recursive: true });
    rmSync(join(dir, MANIFEST_PATH), { force: true }); // the fixtures come with one
  }
  const port = await freePort();
  server = launch('python3', ['-m', 'http.server', String(port), '--bind', '127.0.0.1', '--directory', root], { name: 'http.server' });
  url = `http://127.0.0.1:${port}`;
  await waitFor(`${url}/`, server);
});
after(async () => {
  await server?.stop();
  rmSync(root, { recursive: true, force: true });
});

test('python -m http.server: UNSUPPORTED naming the missing listing and the manifest, not CORRUPT', async () => {
  for (const name of [V9, V9_MOR]) {
    await assert.rejects(HudiTable.open(`${url}/${name.replaceAll('/', '_')}`), (e) => {
      assert.ok(e instanceof UnsupportedError && !(e instanceof CorruptError), `${e.name}: ${e.message}`);
      assert.equal(e.code, 'UNSUPPORTED');
      assert.match(e.message, /does not list directories as JSON/);
      assert.match(e.message, /HTML page/);
      assert.match(e.message, /hudi-edge-manifest\.json/);
      assert.match(e.message, /npx hudi-edge manifest/);
      return true;
    });
  }
});

test('writeManifest on the local copy: the same host then serves Copy-On-Write and Merge-On-Read tables', async () => {
  for (const name of [V9, V9_MOR]) {
    const dir = join(root, name.replaceAll('/', '_'));
    const m = await writeManifest(dir);
    assert.equal(m.path, MANIFEST_PATH);
    assert.ok(m.written && m.files > 0 && /^\d{17}$/.test(m.latestInstant));
    const exp = await expected(name);
    const t = await HudiTable.open(`${url}/${name.replaceAll('/', '_')}`);
    assert.deepEqual(...sameRows(await t.rows(), exp, exp.snapshot.rows), name);
    // An http(s) host takes no writes: the manifest comes back to be uploaded.
    await assert.rejects(t.manifest(), { code: 'READ_ONLY' });
    t.close();
  }
});
