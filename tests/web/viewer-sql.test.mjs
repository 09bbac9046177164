// The viewer's SQL card in Chromium, on fixture tables served by nginx: DuckDB-wasm loads only
// when the card is opened; a GROUP BY and a filtered query return what the package's own read
// of the table gives (computed here in Node, not written down); the filter pushed to hudi-edge
// costs fewer requests than the same query without it; a label + number result is charted;
// a table opened earlier in the page is queried by its name; results page; bad SQL shows an
// error in the card. Prints the load and first-result times (tests/bench/results/viewer_sql.md).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { repo, unzippedFixtures } from './lib/servers.mjs';
import { screenshotDir, useViewer } from './lib/browser.mjs';

const { HudiTable } = await import(join(repo, 'pkg-config', 'dist', 'node.js'));
const tables = () => join(unzippedFixtures(), 'tables');
const viewer = useViewer(() => ({ '/tables/': tables() }));
const TXNS = 'sample_table/cow/v9_txns_simple_meta';
const TRIPS = 'quickstart_trips_table/mor/avro/v8_trips_8i3u1d';
let page;
/** Every URL the page fetched. */
const fetched = [];

/** The package's own read of a fixture table, as row objects. */
async function packageRows(name, o = {}) {
  const t = await HudiTable.open(join(tables(), name));
  try {
    return await t.rows(o);
  } finally {
    t.close();
  }
}

const groupCount = (rows, col) => {
  const m = new Map();
  for (const r of rows) m.set(r[col], (m.get(r[col]) ?? 0) + 1);
  return [...m].sort(([a], [b]) => (a < b ? -1 : 1)).map(([k, n]) => [String(k), String(n)]);
};

/** Runs `sql` in the card; the rows shown (cell texts, without the row number) and the cost. */
async function run(sql) {
  await page.fill('[data-testid=sql-input]', sql);
  const t0 = Date.now();
  await page.click('[data-testid=sql-run]');
  await page.waitForFunction(() => ['done', 'error'].includes(document.querySelector('.sql')?.dataset.state), null, { timeout: 120000 });
  const ms = Date.now() - t0;
  const state = await page.getAttribute('.sql', 'data-state');
  if (state === 'error') console.log(`# ${sql}: ${await page.textContent('[data-testid=sql-error]')}`);
  const rows = await page.$$eval('[data-testid=sql-row]', (trs) => trs.map((tr) => [...tr.children].slice(1).map((td) => td.textContent)));
  const cost = state === 'done' ? await page.$eval('[data-testid=sql-cost]', (e) => ({ requests: Number(e.dataset.requests), bytes: Number(e.dataset.bytes) })) : null;
  return { state, rows, cost, ms };
}

/** Opens the trips table, then the transactions table (useViewer's page exists once its own
 *  `before` ran: called from the first test). */
async function openTables() {
  page = viewer.page;
  page.on('request', (r) => fetched.push(r.url()));
  // A table opened first: the SQL card can name it later.
  await page.goto(`${viewer.nginx.url}/?table=${encodeURIComponent(`${viewer.nginx.url}/tables/${TRIPS}`)}`);
  await page.waitForSelector('body[data-ready=yes]', { timeout: 120000 });
  // Opened from the page (a reload would forget the first).
  await page.fill('[data-testid=table-url]', `${viewer.nginx.url}/tables/${TXNS}`);
  await page.click('[data-testid=open-table]');
  await page.waitForSelector('body:not([data-ready])', { timeout: 60000 }).catch(() => {});
  await page.waitForSelector('body[data-ready=yes]', { timeout: 120000 });
}

test('DuckDB loads only when the SQL card is opened', async () => {
  await openTables();
  assert.ok(!fetched.some((u) => /duckdb|\/sql-/.test(u)), 'nothing of the SQL card fetched with the viewer');
  const t0 = Date.now();
  await page.click('nav.jump a[href="#sql"]');
  await page.waitForSelector('[data-testid=sql-input]', { timeout: 60000 });
  console.log(`# SQL card module shown in ${Date.now() - t0} ms`);
  assert.match(await page.textContent('[data-testid=sql-tables]'), /v9_txns_cow_simple_meta.*v8_trips_8i3u1d/);
});

test('a GROUP BY returns the package read\'s counts, and is charted', async () => {
  const want = groupCount(await packageRows(TXNS), 'txn_type');
  const r = await run('SELECT txn_type, count(*) AS n FROM v9_txns_cow_simple_meta GROUP BY txn_type ORDER BY txn_type');
  assert.equal(r.state, 'done');
  console.log(`# first GROUP BY (DuckDB instantiated, table read): ${r.ms} ms; ${await page.textContent('[data-testid=sql-summary]')}`);
  assert.deepEqual(r.rows, want);
  assert.equal(await page.locator('[data-testid=sql-chart] [data-testid=sql-bar]').count(), want.length);
  assert.match(await page.textContent('[data-testid=sql-plan]'), /HASH_GROUP_BY|GROUP/);
  await page.locator('#sql').screenshot({ path: join(screenshotDir(), 'sql-group-by.png') });
  const again = await run('SELECT region, count(*) AS n, sum(amount) AS total FROM v9_txns_cow_simple_meta GROUP BY region ORDER BY region');
  const rows = await packageRows(TXNS);
  const byRegion = groupCount(rows, 'region').map(([k, n]) => {
    const cents = rows.filter((x) => x.region === k).reduce((s, x) => s + BigInt(String(x.amount).replace('.', '')), 0n);
    return [k, n, `${cents / 100n}.${String(cents % 100n).padStart(2, '0')}`];
  });
  assert.deepEqual(again.rows, byRegion);
  assert.equal(await page.locator('[data-testid=sql-chart]').count(), 0, 'no chart for three columns');
  console.log(`# second GROUP BY (DuckDB warm): ${again.ms} ms`);
});

test('a filtered query: the rows of the package\'s filtered read, the filters pushed', async () => {
  const want = (await packageRows(TXNS, { filters: [['region', '=', 'apac']], columns: ['txn_id', 'amount'] })).map((x) => [x.txn_id, String(x.amount)]).sort(([a], [b]) => (a < b ? -1 : 1));
  const filtered = await run("SELECT txn_id, amount FROM v9_txns_cow_simple_meta WHERE region = 'apac' AND amount >= 0 ORDER BY txn_id");
  assert.equal(filtered.state, 'done');
  assert.deepEqual(filtered.rows, want);
  assert.equal(await page.textContent('[data-testid=sql-pushed]'), 'region = "apac" and amount >= 0');
  const whole = await run('SELECT txn_id, amount FROM v9_txns_cow_simple_meta ORDER BY txn_id');
  assert.equal(whole.rows.length, (await packageRows(TXNS)).length);
  // IN and BETWEEN reach hudi-edge as DuckDB rewrites them for the scan (a list, a range).
  const inRange = (await packageRows(TXNS, { filters: [['region', 'in', ['apac', 'eu']], ['amount', '>=', 10], ['amount', '<=', 5000]] })).map((x) => [x.txn_id]).sort();
  const both = await run("SELECT txn_id FROM v9_txns_cow_simple_meta WHERE region IN ('apac', 'eu') AND amount BETWEEN 10 AND 5000 ORDER BY txn_id");
  assert.deepEqual(both.rows, inRange);
  assert.ok(inRange.length > 0);
  assert.equal(await page.textContent('[data-testid=sql-pushed]'), 'region in ["apac","eu"] and amount >= 10 and amount <= 5000');
  // A condition hudi-edge cannot take stays DuckDB's alone, and the rows are still right.
  const kept = await run("SELECT txn_id FROM v9_txns_cow_simple_meta WHERE lower(region) = 'apac' ORDER BY txn_id");
  assert.deepEqual(kept.rows, want.map(([k]) => [k]));
  assert.equal(await page.textContent('[data-testid=sql-pushed]'), '—');
});

test('a table opened earlier, by its name; a pushed partition filter costs fewer requests', async () => {
  // Filtered first, on this table's first read in the card: the whole read after it finds
  // nothing of the other partitions cached.
  const sf = (await packageRows(TRIPS, { filters: [['city', '=', 'san_francisco']] })).map((x) => [x.uuid]).sort();
  const filtered = await run("SELECT uuid FROM v8_trips_8i3u1d WHERE city = 'san_francisco' ORDER BY uuid");
  assert.deepEqual(filtered.rows, sf);
  assert.equal(await page.textContent('[data-testid=sql-pushed]'), 'city = "san_francisco"');
  const want = groupCount(await packageRows(TRIPS), 'city');
  const whole = await run('SELECT city, count(*) AS n FROM v8_trips_8i3u1d GROUP BY city ORDER BY city');
  assert.equal(whole.state, 'done');
  assert.deepEqual(whole.rows, want);
  console.log(`# requests feeding DuckDB: ${filtered.cost.requests} with the filter pushed, ${whole.cost.requests} without (${filtered.cost.bytes} / ${whole.cost.bytes} bytes)`);
  assert.ok(filtered.cost.requests < whole.cost.requests, `${filtered.cost.requests} < ${whole.cost.requests}`);
});

test('results page; bad SQL shows an error in the card', async () => {
  const r = await run('SELECT i FROM range(120) t(i) ORDER BY i');
  assert.equal(r.rows.length, 50);
  assert.equal(await page.textContent('[data-testid=sql-page]'), ' page 1 of 3 ');
  await page.click('[data-testid=sql-next]');
  assert.equal(await page.textContent('[data-testid=sql-row] >> nth=0 >> td >> nth=1'), '50');
  for (const bad of ['SELEC * FRM v9_txns_cow_simple_meta', 'SELECT * FROM no_such_table', 'SELECT no_such_column FROM v9_txns_cow_simple_meta']) {
    const e = await run(bad);
    assert.equal(e.state, 'error', bad);
    assert.ok(await page.locator('[data-testid=sql-error]').isVisible(), bad);
  }
  // The card still works after errors.
  assert.equal((await run('SELECT 1 AS one')).rows[0][0], '1');
  const duck = fetched.filter((u) => /duckdb/.test(u));
  assert.ok(duck.some((u) => u.endsWith('.wasm')), 'DuckDB-wasm fetched once the card opened');
});
