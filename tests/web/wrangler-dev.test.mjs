// The edge-ingest example under `wrangler dev --local` against moto's S3 (wrangler-dev.mjs:
// the tarball and wrangler installed into a copy of the example, as its README says; POSTs,
// GETs, the 400s and 413s, the scheduled handler, the table read back). Skipped, saying why,
// when wrangler cannot be installed here (no npm registry).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { join } from 'node:path';

test('the edge-ingest example under wrangler dev, against moto', async (t) => {
  const child = spawn(process.execPath, [join(import.meta.dirname, 'wrangler-dev.mjs')], { stdio: ['ignore', 'pipe', 'inherit'] });
  let out = '';
  child.stdout.on('data', (d) => {
    out += d;
    process.stdout.write(d);
  });
  const code = await new Promise((resolve) => child.on('exit', (c, sig) => resolve(c ?? sig)));
  if (code === 77) {
    t.skip(out.split('\n').find((l) => l.startsWith('SKIP')) ?? 'wrangler unavailable');
    return;
  }
  assert.equal(code, 0, out.split('\n').filter((l) => l.startsWith('FAIL')).join('\n') || out.slice(-2000));
});
