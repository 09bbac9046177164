// s3:// tables against moto's S3 server (PyPI, from the project venv): with credentials, with
// presigned URLs (the secrets stay in this process, as on a server), anonymous (denied), and
// tables that are not there. Needs a wasm build with S3 storage (WasmTable.openUrl).
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { HudiTable, HudiError } from 'hudi-edge';
import { WasmTable } from '../dist/wasm/hudi_edge.js';
import { cache, repo, startMoto, unzippedFixtures } from '../../tests/web/lib/servers.mjs';
import { V6, V9, V9_MOR, expected, sameRows } from './helpers.mjs';

const CREDS = { accessKeyId: 'AKIDHUDIEDGEPKG', secretAccessKey: 'hudi-edge-pkg-secret-key', region: 'us-east-1' };
const BUCKET = 'pkg-tables';
let moto;
let s3;

before(async () => {
  // Missing pieces fail the file loudly: a skipped S3 suite would read as green.
  if (typeof WasmTable.openUrl !== 'function') throw new Error('this wasm build has no S3 storage (WasmTable.openUrl): rebuild with .ci/build-wasm');
  const signer = join(repo, 'tests', 'http', 'sigv4.mjs');
  if (!existsSync(signer)) throw new Error(`the presigner ${signer} is missing`);
  moto = await startMoto();
  // The http branch's loader: creates the bucket (with CORS) and uploads the tables.
  execFileSync(join(cache, 'venv', 'bin', 'python'), [join(repo, 'tests', 'http', 's3_load.py'), moto.url, BUCKET, join(unzippedFixtures(), 'tables'), V6, V9, V9_MOR], {
    env: { ...process.env, AWS_ACCESS_KEY_ID: CREDS.accessKeyId, AWS_SECRET_ACCESS_KEY: CREDS.secretAccessKey, AWS_DEFAULT_REGION: CREDS.region },
  });
  s3 = { endpoint: moto.url, region: CREDS.region, accessKeyId: CREDS.accessKeyId, secretAccessKey: CREDS.secretAccessKey, forcePathStyle: true };
});
after(async () => moto?.stop());

test('s3:// with credentials: rows, timeline, plan, progress', async () => {
  for (const name of [V6, V9, V9_MOR]) {
    const exp = await expected(name);
    const t = await HudiTable.open(`s3://${BUCKET}/${name}`, { s3 });
    assert.deepEqual(...sameRows(await t.rows(), exp, exp.snapshot.rows));
    const instants = await t.timeline();
    assert.equal(instants.filter((i) => i.state === 'completed').length, exp.timeline_folder.completed.length);
    const seen = [];
    const plan = await t.plan({ onProgress: (p) => seen.push(p) });
    assert.equal(plan.stats.filesSelected, plan.fileSlices.reduce((n, s) => n + (s.baseFile ? 1 : 0) + s.logFiles.length, 0));
    assert.ok(seen.length > 0);
    t.close();
  }
});

test('s3:// with presigned URLs: no secret in this page, LIST and GET asked for', async () => {
  const { presigner } = await import(join(repo, 'tests', 'http', 'sigv4.mjs'));
  const sign = presigner({ endpoint: moto.url, bucket: BUCKET, creds: CREDS });
  const asked = new Set();
  const t = await HudiTable.open(`s3://${BUCKET}/${V9}`, {
    presign: async (method, key, page) => {
      asked.add(method);
      return sign(method, key, page);
    },
  });
  const exp = await expected(V9);
  assert.deepEqual(...sameRows(await t.rows(), exp, exp.snapshot.rows));
  assert.ok(asked.has('LIST') && asked.has('GET'), [...asked].join());
});

test('s3:// errors: NOT_FOUND, ACCESS_DENIED without credentials, no secrets in messages', async () => {
  await assert.rejects(HudiTable.open(`s3://${BUCKET}/no/such/table`, { s3 }), (e) => e instanceof HudiError && e.code === 'NOT_FOUND');
  await assert.rejects(HudiTable.open(`s3://${BUCKET}/${V9}`, { s3: { endpoint: moto.url, region: CREDS.region, forcePathStyle: true } }), (e) => {
    assert.ok(e instanceof HudiError && e.code === 'ACCESS_DENIED', `${e.code}: ${e.message}`);
    assert.match(`${e.object}`, /hoodie\.properties/);
    return true;
  });
  // moto does not check signatures, so a wrong secret meets a missing table: NOT_FOUND, and
  // the secret never shows in the message.
  await assert.rejects(HudiTable.open(`s3://${BUCKET}/no/table`, { s3: { ...s3, secretAccessKey: 'wrong-secret-123' } }), (e) => {
    assert.ok(e instanceof HudiError && e.code === 'NOT_FOUND', `${e.code}: ${e.message}`);
    assert.ok(!e.message.includes('wrong-secret-123') && !e.message.includes(CREDS.secretAccessKey), e.message);
    return true;
  });
});
