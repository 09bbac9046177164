// The viewer on a table that writers are busy with: a committed upsert, a write aborted after
// its first data file (rolled back: a rollback instant and the instant it undid), a write
// aborted under the LAZY policy (its inflight instant left with a heartbeat) and a storage lock
// held by another writer. The timeline shows the inflight instant, the rollback and the
// rolled-back instant distinctly; the overview shows the lock and the heartbeat; the commit
// detail shows the records and the metadata-table partitions the upsert wrote; Reload shows a
// commit made meanwhile. Tables written by the package (pkg-config/dist) over node:fs.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { cpSync, existsSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { repo, startNginx, unzippedFixtures, writeManifests } from './lib/servers.mjs';
import { launchChromium, screenshotDir } from './lib/browser.mjs';
import { WRITE_TABLES, txnRows } from './lib/writes.mjs';
import { fsStorage } from '../js/fs_storage.mjs';
import { tempDir } from '../lib/harness.mjs';

const dist = join(repo, 'www', 'dist');
const { HudiTable } = await import(join(repo, 'pkg-config', 'dist', 'node.js'));
const arrow = createRequire(join(repo, 'pkg-config', 'package.json'))('apache-arrow');

/** `rows` as an apache-arrow Table typed as the engine takes them, plus a `channel` column. */
function withChannel(rows) {
  const columns = {};
  for (const k of Object.keys(rows[0])) {
    const v = rows.map((r) => r[k]);
    if (typeof v[0] === 'boolean') columns[k] = arrow.vectorFromArray(v, new arrow.Bool());
    else if (typeof v[0] === 'number') columns[k] = arrow.vectorFromArray(v.map(BigInt), new arrow.Int64());
    else columns[k] = arrow.vectorFromArray(v, new arrow.Utf8());
  }
  columns.channel = arrow.vectorFromArray(rows.map(() => 'web'), new arrow.Utf8());
  return new arrow.Table(columns);
}
let work;
let nginx;
let browser;

before(async () => {
  assert.ok(existsSync(join(dist, 'index.html')), 'www/dist is built (cd www && npm ci && npm run build)');
  work = tempDir('viewer-writers');
  browser = await launchChromium();
});

after(async () => {
  await browser?.close();
  await nginx?.stop();
  if (work) rmSync(work, { recursive: true, force: true });
});

/** fs storage that aborts `controller` once the first data file is written. */
function abortAfterDataFile(root, controller) {
  const s = fsStorage(root);
  const put = s.put;
  s.put = async (path, ...rest) => {
    const r = await put(path, ...rest);
    if (!controller.signal.aborted && !path.startsWith('.hoodie/') && path.endsWith('.parquet')) {
      controller.abort(new Error('test'));
      await new Promise((res) => setTimeout(res, 20));
    }
    return r;
  };
  return s;
}

async function abortedWrite(root, options) {
  const controller = new AbortController();
  const t = await HudiTable.openStorage(abortAfterDataFile(root, controller));
  try {
    await t.upsert(txnRows('cow', 4, { prefix: 'ABORTED' }), { signal: controller.signal, options });
    assert.fail('the write was not aborted');
  } catch (e) {
    assert.equal(e.code, 'ABORTED', e.message);
    return e;
  } finally {
    t.close();
  }
}

test('inflight, rolled back, lock and heartbeat, commit detail, Reload', async () => {
  const root = join(work, 'busy');
  cpSync(join(unzippedFixtures(), 'tables', WRITE_TABLES.cow), root, { recursive: true });
  const t = await HudiTable.openStorage(fsStorage(root));
  const commit = await t.upsert(txnRows('cow', 6, { prefix: 'VIEW' }));
  const eager = await abortedWrite(root, {});
  assert.equal(eager.rolledBack.length, 1);
  const lazy = await abortedWrite(root, { 'hoodie.cleaner.policy.failed.writes': 'LAZY' });
  assert.equal(lazy.pending.length, 1);
  const inflight = lazy.pending[0];
  mkdirSync(join(root, '.hoodie', '.locks'), { recursive: true });
  const validUntil = Date.now() + 3_600_000;
  writeFileSync(join(root, '.hoodie', '.locks', 'table_lock.json'), JSON.stringify({ expired: false, validUntil, owner: 'writer-7f3a' }));
  mkdirSync(join(root, '.hoodie', '.heartbeat'), { recursive: true });
  writeFileSync(join(root, '.hoodie', '.heartbeat', inflight), '');
  writeManifests(root);
  nginx = await startNginx({ mounts: { '/busy/': root, '/': dist } });

  const page = await browser.newPage();
  await page.goto(`${nginx.url}/?table=${encodeURIComponent(`${nginx.url}/busy`)}`);
  await page.waitForSelector('body[data-timeline-drawn=yes]', { timeout: 60000 });
  const state = (rt) => page.getAttribute(`[data-testid=instant][data-requested-time="${rt}"]`, 'data-state');
  assert.equal(await state(inflight), 'inflight');
  assert.equal(await state(commit.instant), 'completed');
  await page.waitForSelector(`[data-testid=rolled-back-instant][data-requested-time="${eager.rolledBack[0]}"]`, { timeout: 30000 });
  assert.ok(await page.$('[data-testid=instant][data-action=rollback][data-state=completed]'), 'the rollback instant');

  await page.waitForSelector('[data-testid=storage-lock]', { timeout: 30000 });
  assert.equal(await page.getAttribute('[data-testid=storage-lock]', 'data-expired'), 'false');
  assert.equal(await page.textContent('[data-testid=lock-owner]'), 'writer-7f3a');
  assert.match(await page.textContent('[data-testid=storage-lock]'), new RegExp(`valid until ${new Date(validUntil).toISOString().slice(0, 16).replace('T', ' ')}`));
  assert.deepEqual(await page.$$eval('[data-testid=heartbeat]', (els) => els.map((e) => e.textContent)), [inflight]);

  // The list row (on the axis the bars of instants a second apart overlap).
  await page.click(`[data-testid=instant-row][data-requested-time="${commit.instant}"]`);
  await page.waitForSelector(`[data-testid=commit-detail][data-requested-time="${commit.instant}"]`);
  assert.match(await page.textContent('[data-testid=commit-detail] .stats'), /6\s*inserts/);
  await page.waitForSelector('[data-testid=mdt-partitions]');
  const partitions = await page.$$eval('[data-testid=mdt-partitions] li', (els) => els.map((e) => e.dataset.partition).sort());
  assert.deepEqual(partitions, [...commit.metadataPartitions].sort());
  await page.screenshot({ path: join(screenshotDir(), 'writers.png') });

  // A commit made while the page is open shows after Reload; it added a column, which its
  // detail names against the write before it.
  const later = await t.upsert(withChannel(txnRows('cow', 2, { prefix: 'LATER' })), { addColumns: true, options: { 'hoodie.cleaner.policy.failed.writes': 'LAZY' } });
  writeManifests(root);
  await page.click('[data-testid=reload]');
  await page.waitForSelector(`[data-testid=instant][data-requested-time="${later.instant}"][data-state=completed]`, { timeout: 30000 });
  assert.equal(await state(inflight), 'inflight', 'the other writer is still inflight');
  await page.click(`[data-testid=instant-row][data-requested-time="${later.instant}"]`);
  await page.waitForSelector(`[data-testid=commit-detail][data-requested-time="${later.instant}"] [data-testid=schema-change]`, { timeout: 30000 });
  const changes = await page.$$eval('[data-testid=schema-change] li', (els) => els.map((e) => [e.dataset.change, e.textContent]));
  assert.deepEqual(changes, [['added', '+ channel string']]);
  assert.match(await page.textContent('[data-testid=schema-change] h4'), new RegExp(commit.instant));
  t.close();
});

test('a clustering shows the file groups it rewrote', async () => {
  const root = join(work, 'clustered');
  cpSync(join(unzippedFixtures(), 'tables', WRITE_TABLES.cow), root, { recursive: true });
  const t = await HudiTable.openStorage(fsStorage(root));
  // Every insert opens a new file group (no small-file packing), for clustering to merge.
  const small = { 'hoodie.parquet.small.file.limit': '0' };
  for (let i = 0; i < 3; i++) await t.upsert(txnRows('cow', 3, { prefix: `SMALL${i}` }), { options: small });
  const clustering = { 'hoodie.clustering.plan.strategy.small.file.limit': String(64 << 20) };
  const report = await t.cluster({ options: clustering });
  const [done] = report.completed;
  assert.ok(done && done.fileGroupsReplaced.length > 1, JSON.stringify(report));
  t.close();
  writeManifests(root);
  const server = await startNginx({ mounts: { '/clustered/': root, '/': dist } });
  try {
    const page = await browser.newPage();
    await page.goto(`${server.url}/?table=${encodeURIComponent(`${server.url}/clustered`)}`);
    await page.waitForSelector('body[data-timeline-drawn=yes]', { timeout: 60000 });
    await page.click(`[data-testid=instant-row][data-requested-time="${done.instant}"]`);
    const detail = page.locator(`[data-testid=commit-detail][data-requested-time="${done.instant}"] [data-testid=service-detail]`);
    await detail.waitFor({ timeout: 30000 });
    const value = async (label) => Number((await detail.locator('.stat', { hasText: label }).locator('.stat-value').textContent()).replace(/,/g, ''));
    assert.equal(await value('file groups clustered'), done.fileGroupsReplaced.length);
    assert.equal(await value('new file groups'), done.filesWritten.length);
    assert.equal(await value('records rewritten'), done.recordsWritten);
  } finally {
    await server.stop();
  }
});
