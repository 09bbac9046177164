// The viewer's Health view and bucket view in Chromium: the Health card shows the numbers of
// `health()`'s JSON and, on a read-only store, says why it cannot fix; the bucket view lists
// every table under a folder with its findings and opens one; against moto's S3 the Fix button
// compacts a Merge-On-Read table with a log backlog and the backlog finding clears.
import { after, afterEach, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { repo, startLatencyProxy, startMoto, startNginx, unzippedFixtures } from './lib/servers.mjs';
import { launchChromium } from './lib/browser.mjs';
import { WRITE_TABLES, S3_CREDS, loadTables, s3Options, txnRows } from './lib/writes.mjs';

const dist = join(repo, 'www', 'dist');
const { HudiTable } = await import(join(repo, 'pkg-config', 'dist', 'node.js'));
const V9_MOR = 'sample_table/mor/avro/v9_txns_simple_meta';
let nginx;
let moto;
let browser;
let page;

before(async () => {
  assert.ok(existsSync(join(dist, 'index.html')), 'www/dist is built (cd www && npm ci && npm run build)');
  nginx = await startNginx({ mounts: { '/tables/': join(unzippedFixtures(), 'tables'), '/': dist } });
  moto = await startMoto();
  browser = await launchChromium();
  page = await browser.newPage();
});

afterEach(() => browser?.assertNoPageErrors());

after(async () => {
  await nginx?.stop();
  await moto?.stop();
  await browser?.close();
});

/** The Health card's stats, by test id. */
async function stats() {
  return page.$$eval('[data-testid=health] .stat', (els) => Object.fromEntries(els.map((e) => [e.dataset.testid, e.querySelector('b').textContent])));
}

const findingCodes = () => page.$$eval('[data-testid=finding]', (els) => els.map((e) => e.dataset.code));

test('the Health card shows the numbers of health(), and a read-only store cannot fix', async () => {
  await page.goto(`${nginx.url}/?table=${encodeURIComponent(`${nginx.url}/tables/${V9_MOR}`)}`);
  await page.waitForSelector('[data-testid=health]', { timeout: 60000 });
  const report = await page.evaluate(() => window.hudiViewer.table.health());
  const shown = await stats();
  assert.equal(shown['health-file-groups'].replace(/,/g, ''), String(report.fileGroups));
  assert.equal(shown['health-base-files'].replace(/,/g, ''), String(report.baseFiles));
  assert.equal(shown['health-small-files'].replace(/,/g, ''), String(report.smallBaseFiles));
  assert.equal(shown['health-log-files'].replace(/,/g, ''), String(report.logFiles));
  assert.equal(shown['health-max-logs'], String(report.maxLogFilesPerSlice));
  assert.equal(shown['health-pending'], String(report.pendingInstants.length));
  assert.equal(shown['health-failed'], String(report.failedWrites));
  assert.equal(shown['health-active'], String(report.activeTimelineInstants));
  assert.equal(shown['health-mdt-lag'], String(report.metadataTable.lagInstants));
  assert.deepEqual(await findingCodes(), report.findings.map((f) => f.code));
  if (report.findings.some((f) => f.service)) {
    assert.match(await page.textContent('[data-testid=fix-unavailable]'), /writable store/);
  }
  assert.equal(await page.$('[data-testid=fix]'), null, 'no Fix button on a read-only store');
});

test('the bucket view lists every table under a folder, with its findings, and opens one', async () => {
  // Copy-On-Write tables: a directory index that hides dot-files lists them (not log files).
  const folder = 'sample_table/cow';
  const onDisk = readdirSync(join(unzippedFixtures(), 'tables', folder), { withFileTypes: true })
    .filter((e) => e.isDirectory() && existsSync(join(unzippedFixtures(), 'tables', folder, e.name, '.hoodie', 'hoodie.properties')))
    .map((e) => e.name)
    .sort();
  assert.ok(onDisk.length >= 2, onDisk.join());
  await page.goto(`${nginx.url}/?bucket=${encodeURIComponent(`${nginx.url}/tables/${folder}`)}`);
  await page.waitForSelector('[data-testid=bucket]', { timeout: 60000 });
  const rows = await page.$$eval('[data-testid=bucket-row]', (els) => els.map((e) => e.dataset.path));
  assert.deepEqual([...rows].sort(), onDisk);
  // The first table the engine reads (Lance tables show their error instead).
  let first;
  let report;
  for (const name of onDisk) {
    const t = await HudiTable.open(join(unzippedFixtures(), 'tables', folder, name)).catch(() => null);
    if (!t) continue;
    [first, report] = [name, await t.health()];
    t.close();
    break;
  }
  const cell = await page.textContent(`[data-testid=bucket-row][data-path="${first}"] td:last-child`);
  assert.equal(cell, report.findings.map((f) => f.code).join(', '));
  await page.click(`[data-testid=bucket-row][data-path="${first}"]`);
  await page.waitForSelector('[data-testid=health]', { timeout: 60000 });
  assert.ok(page.url().includes(encodeURIComponent(first)));
});

test('on S3 the Fix button compacts a Merge-On-Read backlog and the finding clears', async () => {
  const bucket = 'health-fix';
  loadTables(moto.url, bucket, [WRITE_TABLES.mor]);
  const url = `s3://${bucket}/${WRITE_TABLES.mor}`;
  const t = await HudiTable.open(url, { s3: s3Options(moto.url) });
  for (let v = 1; v <= 6; v++) {
    await t.write(txnRows('mor', 4, { version: v }), { operation: 'upsert', options: { 'hoodie.compact.inline': 'false' } });
  }
  const before = await t.health();
  t.close();
  assert.ok(before.findings.some((f) => f.code === 'COMPACTION_BACKLOG'), JSON.stringify(before.findings));

  // The viewer and moto on one origin (moto answers no CORS preflight for signed PUTs).
  const origin = await startLatencyProxy(moto.url, 0, { serve: { prefix: '/viewer/', dir: dist } });
  after(() => origin.stop());
  await page.goto(`${origin.url}/viewer/`);
  await page.click('#open-s3');
  await page.fill('dialog input[name=url]', url);
  await page.fill('dialog input[name=endpoint]', origin.url);
  await page.fill('dialog input[name=region]', S3_CREDS.region);
  await page.fill('dialog input[name=accessKeyId]', S3_CREDS.accessKeyId);
  await page.fill('dialog input[name=secretAccessKey]', S3_CREDS.secretAccessKey);
  await page.check('dialog input[name=forcePathStyle]');
  await page.click('dialog button[value=open]');
  await page.waitForSelector('[data-testid=finding][data-code=COMPACTION_BACKLOG]', { timeout: 60000 });
  await page.click('[data-testid=fix]');
  // The fix reopens the table; its new Health card has no backlog.
  await page.waitForFunction(() => {
    const card = document.querySelector('[data-testid=health]');
    return card && !card.querySelector('[data-code=COMPACTION_BACKLOG]') && card.querySelector('[data-testid=health-log-files] b')?.textContent === '0';
  }, null, { timeout: 120000 });
  const reopened = await HudiTable.open(url, { s3: s3Options(moto.url) });
  const report = await reopened.health();
  reopened.close();
  assert.ok(!report.findings.some((f) => f.code === 'COMPACTION_BACKLOG'), JSON.stringify(report.findings));
  assert.equal(report.logFiles, 0);
});
