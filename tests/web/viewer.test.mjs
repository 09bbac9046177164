// The viewer end to end in Debian's Chromium (playwright-core): open fixture tables by URL
// over a loopback nginx, check the timeline shows exactly the table's instants, open a
// commit, run a filtered query and check the rows and the plan panel. Screenshots go to a temp
// dir, or where HUDI_EDGE_SCREENSHOTS says (www/screenshots: the README shows a few).
import { after, afterEach, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { expected, repo, startNginx, unzippedFixtures } from './lib/servers.mjs';
import { launchChromium, screenshotDir } from './lib/browser.mjs';

const dist = join(repo, 'www', 'dist');
const shots = screenshotDir();
let nginx;
let browser;
let page;

before(async () => {
  assert.ok(existsSync(join(dist, 'index.html')), 'www/dist is built (cd www && npm ci && npm run build)');
  const root = unzippedFixtures();
  nginx = await startNginx({ mounts: { '/tables/': join(root, 'tables'), '/generated/': join(root, 'generated'), '/': dist } });
  browser = await launchChromium();
  page = await browser.newPage();
});

// An uncaught exception in the viewer fails the test that caused it.
afterEach(() => browser?.assertNoPageErrors());

after(async () => {
  await nginx?.stop();
  await browser?.close();
});

const shot = (name, locator) => (locator ?? page).screenshot({ path: join(shots, `${name}.png`), ...(locator ? {} : { fullPage: false }) });
const tableUrl = (name) => `${nginx.url}/tables/${name}`;

async function openByUrl(url) {
  await page.fill('[data-testid=table-url]', url);
  await page.click('[data-testid=open-table]');
  await page.waitForSelector('body[data-timeline-drawn=yes]', { timeout: 60000 });
}

async function instantsShown() {
  return page.$$eval('[data-testid=instant]', (els) => els.map((e) => [e.dataset.requestedTime, e.dataset.action, e.dataset.state]));
}

async function runQuery(filter) {
  await page.waitForSelector('.data[data-state=done], .data[data-state=error]', { timeout: 60000 });
  await page.fill('[data-testid=query-filter]', filter);
  await page.click('[data-testid=run-query]');
  await page.waitForFunction(() => document.querySelector('.data')?.dataset.state !== 'running', null, { timeout: 60000 });
  await page.waitForSelector('.data[data-state=done]', { timeout: 60000 });
}

describe('v9 Copy-On-Write table (metadata table, clustering, insert overwrite)', () => {
  const name = 'sample_table/cow/v9_txns_simple_meta';
  let exp;
  before(async () => {
    exp = await expected(name);
    await page.goto(`${nginx.url}/`);
    await page.waitForSelector('[data-testid=sample]');
    await shot('start');
  });

  test('open it by URL: the overview shows its type and version', async () => {
    await openByUrl(tableUrl(name));
    await page.waitForSelector('[data-testid=overview]', { timeout: 60000 });
    assert.equal(await page.textContent('[data-testid=table-type]'), 'Copy-On-Write');
    assert.equal(await page.textContent('[data-testid=table-version]'), 'table version 9');
    assert.ok(page.url().includes(`table=${encodeURIComponent(tableUrl(name))}`), 'the URL opens it again');
  });

  test('the page preloads the read module, and the package takes that one download', async () => {
    const preloaded = await page.evaluate(() => [...document.querySelectorAll('link[rel=preload]')].map((l) => [l.getAttribute('as'), l.href.split('/').at(-1)]));
    assert.equal(preloaded.length, 1, JSON.stringify(preloaded));
    assert.equal(preloaded[0][0], 'fetch');
    assert.match(preloaded[0][1], /^hudi_edge_read_bg-.*\.wasm$/);
    const fetched = await page.evaluate(() => performance.getEntriesByType('resource').map((e) => e.name.split('/').at(-1)).filter((n) => n.endsWith('.wasm')));
    assert.deepEqual(fetched, [preloaded[0][1]], 'one request for the module: the preload');
  });

  test('the timeline shows exactly the table\'s instants', async () => {
    const shown = await instantsShown();
    const want = exp.timeline_folder.completed.map((c) => [c.instant_time, c.action, 'completed']);
    assert.deepEqual(shown, want);
    await page.waitForFunction(() => window.hudiViewer.instants.some((i) => i.operation), null, { timeout: 30000 });
  });

  test('open a commit: its operation, counts and files', async () => {
    const c = exp.commit_metadata.find((x) => x.operationType === 'INSERT_OVERWRITE') ?? exp.commit_metadata[1];
    await page.click(`[data-testid=instant][data-requested-time="${c.instant_time}"]`);
    const detail = page.locator(`[data-testid=commit-detail][data-requested-time="${c.instant_time}"]`);
    await detail.waitFor({ timeout: 30000 });
    const text = await detail.textContent();
    assert.ok(text.includes(c.operationType), c.operationType);
    const files = await detail.locator('table.files tbody tr').count();
    assert.equal(files, c.files_written.length);
    for (const f of c.files_written) assert.ok(text.includes(f.split('/').at(-1)), f);
    const replaced = Object.values(c.replaced_file_ids ?? {}).flat().length;
    if (replaced) assert.ok(text.includes(`Replaced file groups (${replaced})`));
    await shot('timeline-commit', page.locator('#timeline'));
  });

  test('run a filtered query: the rows and the plan panel', async () => {
    const f = exp.filters.find((x) => x.kind === 'partition_eq');
    const [col, , value] = f.filters[0];
    await runQuery(`${col} = '${value}'`);
    const rows = await page.locator('[data-testid=result-row]').count();
    assert.equal(rows, f.python_filter_of_snapshot_keys.length);
    const keys = await page.$$eval('[data-testid=result-row]', (trs) => trs.map((tr) => tr.children[3].textContent));
    assert.deepEqual(keys.sort(), f.python_filter_of_snapshot_keys.map(([k]) => k).sort());
    const slices = exp.snapshot_file_slices.filter((s) => s.partition_path === `${col}=${value}`).length;
    assert.equal(await page.textContent('[data-testid=plan-files-selected]'), String(slices));
    const plan = await page.textContent('[data-testid=plan]');
    assert.match(plan, /Partition pruning/);
    assert.match(plan, new RegExp(`1 of ${new Set(exp.snapshot_file_slices.map((s) => s.partition_path)).size} partitions kept`));
    await shot('data-plan', page.locator('#data'));
    await page.evaluate(() => window.scrollTo(0, 0));
    await shot('table');
  });

  test('a range filter and time travel', async () => {
    const range = exp.filters.find((x) => x.filters.length === 2);
    await runQuery(range.filters.map(([c, op, v]) => `${c} ${op} ${v}`).join(' and '));
    assert.equal(await page.locator('[data-testid=result-row]').count(), range.python_filter_of_snapshot_keys.length);

    const tt = exp.time_travel[2];
    await page.click('[data-testid=query-time_travel]');
    await page.selectOption('[data-testid=query-as-of]', tt.as_of);
    await runQuery('');
    assert.equal(await page.locator('[data-testid=result-row]').count(), tt.row_count);
  });
});

describe('v6 Merge-On-Read table, and the v9 archived timeline', () => {
  test('v6 MOR: instants, a delta commit and a filtered read', async () => {
    const name = 'sample_table/mor/parquet/v6_simplekeygen_nonhivestyle';
    const exp = await expected(name);
    await page.goto(`${nginx.url}/?table=${encodeURIComponent(tableUrl(name))}`);
    await page.waitForSelector('body[data-timeline-drawn=yes]', { timeout: 60000 });
    assert.deepEqual(await instantsShown(), exp.timeline_folder.completed.map((c) => [c.instant_time, c.action, 'completed']));
    assert.equal(await page.textContent('[data-testid=table-type]'), 'Merge-On-Read');
    const f = exp.filters.find((x) => x.kind === 'partition_eq');
    await runQuery(f.filters.map(([c, op, v]) => `${c} ${op} '${v}'`).join(' and '));
    assert.equal(await page.locator('[data-testid=result-row]').count(), f.python_filter_of_snapshot_keys.length);
  });

  test('v9 LSM history: archived instants join the axis', async () => {
    await page.goto(`${nginx.url}/?table=${encodeURIComponent(`${nginx.url}/generated/v9_archive_mor`)}`);
    await page.waitForSelector('body[data-ready=yes]', { timeout: 60000 });
    const active = (await instantsShown()).length;
    await page.click('[data-testid=load-archived]');
    await page.waitForSelector('[data-testid=instant][data-archived=true]', { timeout: 60000 });
    const all = await instantsShown();
    const archived = await page.locator('[data-testid=instant][data-archived=true]').count();
    assert.ok(archived > 0 && all.length === active + archived);
    await page.waitForTimeout(300);
    await shot('archived-timeline', page.locator('#timeline'));
  });

  test('table services: a clean shows what it deleted, a compaction what it merged', async () => {
    const exp = JSON.parse(readFileSync(join(repo, 'tests', 'data', 'generated', 'v9_archive_mor.json'), 'utf8'));
    const clean = exp.completed_instants.find((i) => i.action === 'clean' && i.timeline === 'active');
    await page.click(`[data-testid=instant][data-requested-time="${clean.requested_time}"]`);
    const detail = page.locator(`[data-testid=commit-detail][data-requested-time="${clean.requested_time}"] [data-testid=service-detail]`);
    await detail.waitFor({ timeout: 30000 });
    const deleted = Number((await detail.locator('.stat', { hasText: 'files deleted' }).locator('.stat-value').textContent()).replace(/,/g, ''));
    assert.ok(deleted > 0, 'the clean deleted files');
    await detail.locator('details summary').click();
    assert.equal(await detail.locator('table.files tbody tr').count(), deleted, 'each deleted file listed');
    const kept = await detail.locator('.stat', { hasText: 'earliest commit kept' }).locator('.stat-value').textContent();
    assert.ok(exp.completed_instants.some((i) => i.requested_time === kept), `${kept} is an instant of the table`);
    const compaction = exp.completed_instants.find((i) => i.action === 'commit');
    await page.click(`[data-testid=instant][data-requested-time="${compaction.requested_time}"]`);
    const merged = page.locator(`[data-testid=commit-detail][data-requested-time="${compaction.requested_time}"] [data-testid=service-detail]`);
    await merged.waitFor({ timeout: 30000 });
    assert.match(await merged.textContent(), /file groups compacted/);
    assert.match(await merged.textContent(), /[1-9]\d*\s*log files merged/);
  });
});

describe('errors and samples', () => {
  test('a missing table shows NOT_FOUND', async () => {
    await page.goto(`${nginx.url}/`);
    await page.fill('[data-testid=table-url]', `${nginx.url}/tables/no/such/table`);
    await page.click('[data-testid=open-table]');
    const err = page.locator('[data-testid=error]');
    await err.waitFor({ timeout: 30000 });
    assert.match(await err.textContent(), /NOT_FOUND/);
  });

  test('a sample opens with one click (from the bundled zip)', async () => {
    await page.goto(`${nginx.url}/`);
    await page.click('[data-testid=sample][data-sample=txns-mor-v9]');
    await page.waitForSelector('body[data-ready=yes]', { timeout: 60000 });
    const exp = await expected('sample_table/mor/avro/v9_txns_simple_meta');
    assert.deepEqual(await instantsShown(), exp.timeline_folder.completed.map((c) => [c.instant_time, c.action, 'completed']));
    assert.ok(page.url().includes('sample=txns-mor-v9'));
    await page.click('[data-testid=file-group] >> nth=0');
    await page.waitForSelector('.group-detail table');
    await shot('file-layout', page.locator('#files'));
  });
});
