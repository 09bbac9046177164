// The viewer's Changes card in Chromium, on Spark-written CDC tables served by nginx: a commit
// picked on the timeline shows exactly the rows of Apache Hudi Spark's feed of that commit —
// op, and every field of the before and after images (Hudi meta fields shown) — with the
// counts per operation and the changed fields of updates marked; a range pages; a table
// without a change feed shows the records an incremental read of the commit returns, and
// says so.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { unzippedFixtures } from './lib/servers.mjs';
import { screenshotDir, useViewer } from './lib/browser.mjs';
import { expectedFeeds } from '../lib/cdc.mjs';

const viewer = useViewer(() => ({ '/cdc/': join(unzippedFixtures(), 'cdc'), '/tables/': join(unzippedFixtures(), 'tables') }));
let page;

/** As the card shows a value: text as it is, anything else as JSON. */
const shown = (v) => (typeof v === 'string' ? v : JSON.stringify(v));

/** A Spark row as the card shows it: op, and per image the fields it has with their text. */
function asShown([op, , before, after]) {
  const image = (text) => {
    const v = text === null ? null : JSON.parse(text);
    return v === null ? null : Object.fromEntries(Object.entries(v).map(([k, x]) => [k, shown(x)]));
  };
  return { op, before: op === 'i' ? null : image(before), after: op === 'd' ? null : image(after) };
}

/** The changes on the card's current page, read from the DOM. */
const shownChanges = () =>
  page.$$eval('[data-testid=change]', (els) =>
    els.map((el) => {
      const sides = { before: null, after: null };
      for (const tr of el.querySelectorAll('tbody tr')) {
        for (const td of tr.querySelectorAll('td[data-side]')) {
          if (td.dataset.absent) continue;
          sides[td.dataset.side] ??= {};
          sides[td.dataset.side][tr.dataset.field] = td.textContent;
        }
      }
      return { op: el.dataset.op, ...sides, changed: [...el.querySelectorAll('tbody tr.changed')].map((tr) => tr.dataset.field) };
    }),
  );

const canonical = (list) => list.map((c) => JSON.stringify({ op: c.op, before: c.before, after: c.after })).sort();

async function openTable(path) {
  page = viewer.page;
  const url = viewer.nginx.url;
  await page.goto(`${url}/?table=${encodeURIComponent(`${url}${path}`)}`);
  await page.waitForSelector('[data-testid=changes-run]', { timeout: 60000 });
}

async function showCommit(requestedTime) {
  await page.click(`[data-testid=instant][data-requested-time="${requestedTime}"]`);
  await page.locator(`[data-testid=commit-detail][data-requested-time="${requestedTime}"] [data-testid=show-changes]`).click();
  await page.waitForFunction(() => document.querySelector('.changes')?.dataset.ready === 'yes', null, { timeout: 60000 });
}

const stat = (testid) => page.textContent(`[data-testid=${testid}] .stat-value`).then((t) => Number(t.replace(/,/g, '')));

for (const name of ['cdc_v9_cow_data_before_after', 'cdc_v9_mor_data_before_after']) {
  test(`${name}: the Changes of each commit are Spark's feed of that commit`, async () => {
    const exp = expectedFeeds(name);
    await openTable(`/cdc/${name}`);
    assert.match(await page.textContent('[data-testid=changes-about]'), /records a change feed/);
    await page.check('[data-testid=changes-meta]');
    let compared = 0;
    const writes = new Set(exp.completed_instants.filter((i) => ['commit', 'deltacommit', 'replacecommit'].includes(i.action)).map((i) => i.requested_time));
    for (const f of exp.feeds.slice(1).filter((x) => writes.has(x.end))) {
      await showCommit(f.end);
      const want = f.rows.map(asShown);
      const got = await shownChanges();
      assert.deepEqual(canonical(got), canonical(want), `${name} commit ${f.end}`);
      for (const op of ['i', 'u', 'd']) {
        assert.equal(await stat({ i: 'changes-inserts', u: 'changes-updates', d: 'changes-deletes' }[op]), f.rows.filter((r) => r[0] === op).length, `${f.end} ${op}`);
      }
      if (!f.rows.length) assert.ok(await page.$('[data-testid=changes-none]'));
      // Updates mark the fields whose value changed.
      for (const c of got.filter((x) => x.op === 'u')) {
        const changed = Object.keys({ ...c.before, ...c.after }).filter((k) => c.before[k] !== c.after[k]);
        assert.deepEqual([...c.changed].sort(), changed.sort());
      }
      compared += want.length;
    }
    assert.ok(compared >= 40, `${compared} rows compared`);
    // Meta fields hidden: they neither show nor count as changed.
    await page.uncheck('[data-testid=changes-meta]');
    if (name.includes('cow')) {
      // An upsert's changes, for the README (HUDI_EDGE_SCREENSHOTS=…/www/screenshots).
      const upsert = exp.feeds.slice(1).find((f) => f.rows.some((r) => r[0] === 'u') && f.rows.some((r) => r[0] === 'i'));
      await showCommit(upsert.end);
      await page.locator('#changes').screenshot({ path: join(screenshotDir(), 'changes.png') });
    }
    const hidden = await shownChanges();
    assert.ok(hidden.every((c) => c.changed.every((k) => !k.startsWith('_hoodie_')) && Object.keys({ ...c.before, ...c.after }).every((k) => !k.startsWith('_hoodie_'))));
    console.log(`viewer: ${name}: ${compared} rows of ${writes.size} commits equal Spark's`);
  });
}

test('a range: the whole feed, paged, with counts per operation', async () => {
  const name = 'cdc_v9_cow_data_before_after';
  const whole = expectedFeeds(name).feeds[0];
  await openTable(`/cdc/${name}`);
  await page.check('[data-testid=changes-meta]');
  await page.selectOption('[data-testid=changes-start]', '');
  await page.selectOption('[data-testid=changes-end]', whole.end);
  await page.click('[data-testid=changes-run]');
  await page.waitForFunction(() => document.querySelector('.changes')?.dataset.ready === 'yes', null, { timeout: 60000 });
  assert.equal((await stat('changes-inserts')) + (await stat('changes-updates')) + (await stat('changes-deletes')), whole.rows.length);
  const got = [];
  for (;;) {
    got.push(...(await shownChanges()));
    if (await page.isDisabled('[data-testid=changes-next]')) break;
    await page.click('[data-testid=changes-next]');
  }
  assert.ok(whole.rows.length > 25, 'more than one page');
  assert.deepEqual(canonical(got), canonical(whole.rows.map(asShown)));
});

test('a table without a change feed: the records an incremental read of the commit returns, said so', async () => {
  const name = 'sample_table/cow/v9_txns_simple_meta';
  await openTable(`/tables/${name}`);
  assert.match(await page.textContent('[data-testid=changes-about]'), /no change feed/);
  const writes = await page.evaluate(() => window.hudiViewer.instants.filter((i) => i.state === 'completed' && ['commit', 'deltacommit', 'replacecommit'].includes(i.action)));
  const last = writes.at(-1);
  await showCommit(last.requestedTime);
  assert.match(await page.textContent('[data-testid=changes-incremental]'), /No change feed/);
  // Table version 9: an incremental read's bounds are completion times.
  const before = writes.filter((w) => w.completionTime < last.completionTime).sort((a, b) => (a.completionTime < b.completionTime ? -1 : 1)).at(-1);
  const rows = await page.evaluate(({ start, end }) => window.hudiViewer.table.rows({ query: 'incremental', start, end }), { start: before.completionTime, end: last.completionTime });
  assert.ok(rows.length > 0);
  assert.ok(rows.every((r) => r._hoodie_commit_time === last.requestedTime), 'the records the commit wrote');
  assert.equal(await page.locator('[data-testid=written-row]').count(), Math.min(rows.length, 200));
  const commitTimes = await page.$$eval('[data-testid=written-row]', (trs) => {
    const at = [...document.querySelectorAll('[data-testid=changes] thead th')].findIndex((th) => th.textContent === '_hoodie_commit_time');
    return trs.map((tr) => tr.children[at]?.textContent);
  });
  assert.deepEqual([...new Set(commitTimes)], [last.requestedTime]);
  assert.match(await page.textContent('[data-testid=written-count]'), new RegExp(`^${rows.length} record`));
});
