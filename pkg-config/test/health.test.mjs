// t.health(), t.fix() and discover(): the report is the CLI's `health --json` in camelCase;
// a stale lock is found and the fix clears it on a writable store, a read-only one refuses;
// discover() finds every table of a tree (none inside a table), locally and on S3 (moto).
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { HudiTable, ReadOnlyError, discover } from 'hudi-edge';
import { cache, fixtures, repo, startMoto, unzippedFixtures } from '../../tests/web/lib/servers.mjs';
import { fsStorage } from '../../tests/js/fs_storage.mjs';
import { tempDir } from '../../tests/lib/harness.mjs';
import { V6, V9, V9_MOR } from './helpers.mjs';

const table = (name) => join(unzippedFixtures(), 'tables', name);
const camel = (k) => k.replace(/_([a-z0-9])/g, (_, c) => c.toUpperCase());
/** The CLI's JSON with the JS names (evidence keeps its own keys in both). */
function camelized(v, key = '') {
  if (Array.isArray(v)) return v.map((x) => camelized(x));
  if (v === null || typeof v !== 'object' || key === 'evidence') return v;
  return Object.fromEntries(Object.entries(v).map(([k, x]) => [camel(k), camelized(x, k)]));
}
/** Texts that count seconds up to the report's clock ("…12s since …"), with the count hidden. */
function clockless(v) {
  if (typeof v === 'string') return v.replace(/\b\d+s since\b/g, '…s since');
  if (Array.isArray(v)) return v.map(clockless);
  if (v === null || typeof v !== 'object') return v;
  return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, clockless(x)]));
}
/** Without what moves with the clock or counts requests: the CLI and the package report a moment apart. */
function steady(h) {
  const { nowMs, io, activity, clean, pendingInstants, ...rest } = h;
  const { lastCleanAgeSecs, ...cleanRest } = clean;
  return clockless({ ...rest, clean: cleanRest, pending: pendingInstants.map(({ ageSecs, heartbeatAgeSecs, ...p }) => p) });
}

test('health(): the CLI report, field for field, with the JS names', async () => {
  const cli = join(repo, 'target', 'debug', 'hudi-edge');
  if (!existsSync(cli)) throw new Error(`${cli} is missing: cargo build first`);
  for (const name of [V6, V9, V9_MOR]) {
    const t = await HudiTable.open(table(name));
    const h = await t.health();
    const fromCli = camelized(JSON.parse(execFileSync(cli, ['health', table(name), '--json'], { encoding: 'utf8' })));
    const { location: _a, ...ours } = steady(h);
    const { location: _b, ...theirs } = steady(fromCli);
    assert.deepEqual(ours, theirs, name);
    for (const field of ['fileGroups', 'baseFiles', 'smallBaseFiles', 'logFiles', 'maxLogFilesPerSlice', 'failedWrites', 'activeTimelineInstants']) {
      assert.equal(typeof h[field], 'number', `${name}: ${field}`);
    }
    assert.ok(Array.isArray(h.pendingInstants) && Array.isArray(h.findings));
    assert.equal(typeof h.metadataTable.lagInstants, 'number');
    assert.ok(!('columnChunk' in (h.io.byPurpose ?? {})) && !('column_chunk' in (h.io.byPurpose ?? {})), 'no data read');
    t.close();
  }
});

test('fix(): a stale lock is taken and released on a writable store; a read-only store refuses', async () => {
  const dir = join(tempDir('pkg-health'), 't');
  cpSync(table(V9_MOR), dir, { recursive: true });
  mkdirSync(join(dir, '.hoodie', '.locks'), { recursive: true });
  writeFileSync(join(dir, '.hoodie', '.locks', 'table_lock.json'), JSON.stringify({ expired: false, validUntil: Date.now() - 600_000, owner: 'gone' }));
  const t = await HudiTable.openStorage(fsStorage(dir, { etags: true }));
  const before = await t.health();
  const stale = before.findings.find((f) => f.code === 'STALE_LOCK');
  assert.ok(stale, JSON.stringify(before.findings));
  assert.equal(stale.service, 'lock');
  assert.equal(stale.evidence.owner, 'gone');
  const done = await t.fix();
  assert.ok(done.fixes.some((f) => f.service === 'lock' && f.ok), JSON.stringify(done.fixes));
  assert.ok(!done.after.findings.some((f) => f.code === 'STALE_LOCK'));
  assert.equal(done.after.lock.stale, false);
  t.close();

  const zipped = await HudiTable.openZip(await readFile(join(fixtures, 'tables', `${V9_MOR}.zip`)), 't.zip');
  await assert.rejects(zipped.fix(), ReadOnlyError);
  zipped.close();
});

test('discover(): every table of a local tree, none inside a table, and the depth limit', async () => {
  const root = tempDir('pkg-discover');
  cpSync(table(V9), join(root, 'a'), { recursive: true });
  cpSync(table(V9_MOR), join(root, 'x', 'y', 'b'), { recursive: true });
  cpSync(table(V6), join(root, 'a', 'inside'), { recursive: true });
  mkdirSync(join(root, 'notes'), { recursive: true });
  writeFileSync(join(root, 'notes', 'readme.txt'), 'not a table');
  const found = await discover(root);
  assert.deepEqual(found.tables.map((t) => t.path), ['a', 'x/y/b']);
  assert.equal(found.truncated, false);
  for (const t of found.tables) {
    const h = await (await HudiTable.open(join(root, t.path))).health();
    assert.deepEqual(t.findings.map((f) => f.code), h.findings.map((f) => f.code), t.path);
    assert.equal(t.bytes, h.baseBytes + h.logBytes);
  }
  const shallow = await discover(root, { maxDepth: 1, health: false });
  assert.equal(shallow.truncated, true);
  assert.match(shallow.limits.join(' '), /depth limit/);
  assert.deepEqual(shallow.tables.map((t) => t.path), ['a']);
});

describeS3();

function describeS3() {
  const CREDS = { accessKeyId: 'AKIDHUDIEDGEPKG', secretAccessKey: 'hudi-edge-pkg-secret-key', region: 'us-east-1' };
  const BUCKET = 'pkg-discover';
  let moto;
  let s3;
  before(async () => {
    moto = await startMoto();
    execFileSync(join(cache, 'venv', 'bin', 'python'), [join(repo, 'tests', 'http', 's3_load.py'), moto.url, BUCKET, join(unzippedFixtures(), 'tables'), V6, V9, V9_MOR], {
      env: { ...process.env, AWS_ACCESS_KEY_ID: CREDS.accessKeyId, AWS_SECRET_ACCESS_KEY: CREDS.secretAccessKey, AWS_DEFAULT_REGION: CREDS.region },
    });
    s3 = { endpoint: moto.url, region: CREDS.region, accessKeyId: CREDS.accessKeyId, secretAccessKey: CREDS.secretAccessKey, forcePathStyle: true };
  });
  after(async () => moto?.stop());

  test('discover(s3://): the tables of a bucket, each with its findings', async () => {
    const found = await discover(`s3://${BUCKET}/`, { s3 });
    assert.deepEqual(found.tables.map((t) => t.path).sort(), [V6, V9, V9_MOR].sort());
    for (const t of found.tables) {
      assert.equal(t.error, null, t.path);
      assert.equal(t.location, `s3://${BUCKET}/${t.path}`);
      const h = await (await HudiTable.open(`s3://${BUCKET}/${t.path}`, { s3 })).health();
      assert.deepEqual(t.findings.map((f) => f.code), h.findings.map((f) => f.code), t.path);
    }
    const few = await discover(`s3://${BUCKET}/`, { s3, maxListings: 2, health: false });
    assert.equal(few.truncated, true);
    assert.match(few.limits.join(' '), /listing limit/);
  });
}
