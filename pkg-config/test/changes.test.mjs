// The change feed against Spark: every CDC table of tests/data/cdc (each supplemental logging
// mode, Copy-On-Write and Merge-On-Read, each table version there) read from its zip, the whole
// range and each commit alone, row for row (op, ts_ms and both images as the strings Spark
// returned); the same over a loopback nginx; changes() as parsed objects; changePlan();
// and a table without change data capture refused with a typed error.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { AbortedError, HudiTable, UnsupportedError } from 'hudi-edge';
import { arrowFeedRows, cdcNames, cdcZip, expectedFeeds, feedsOf, sortedFeed, sparkExact } from '../../tests/lib/cdc.mjs';
import { V9, useNginx } from './helpers.mjs';

const server = useNginx();
const NAMES = cdcNames();

test('tests/data/cdc holds every supplemental mode, COW and MOR', () => {
  assert.ok(NAMES.length >= 7, NAMES.join());
  for (const mode of ['op_key_only', 'data_before', 'data_before_after']) {
    for (const type of ['cow', 'mor']) assert.ok(NAMES.includes(`cdc_v9_${type}_${mode}`), `${type} ${mode}`);
  }
});

for (const name of NAMES) {
  const exp = expectedFeeds(name);
  const skip = !sparkExact(exp) && `${exp.read_by}'s feed: compared with its allowances by tests/cdc.rs`;
  test(`${name}: changesArrow() equals Spark's feed, whole range and commit by commit`, { skip }, async () => {
    const t = await HudiTable.openZip(cdcZip(name), `${name}.zip`);
    try {
      let rows = 0;
      for (const f of feedsOf(exp)) {
        const { table, stats } = await t.changesArrow({ start: f.start, end: f.end });
        assert.deepEqual(table.schema.fields.map((x) => x.name), ['op', 'ts_ms', 'before', 'after']);
        const got = sortedFeed(arrowFeedRows(table));
        assert.deepEqual(got, f.rows, `${name} (${f.start}, ${f.end}]`);
        assert.equal(stats.rows, f.rows.length);
        const ops = {};
        for (const r of f.rows) ops[r[0]] = (ops[r[0]] ?? 0) + 1;
        assert.deepEqual(Object.fromEntries(Object.entries(stats.operations).filter(([, n]) => n > 0)), ops, 'stats.operations');
        rows += f.rows.length;
      }
      assert.ok(rows >= 100, `${rows} rows compared`);
    } finally {
      t.close();
    }
  });
}

describe('over HTTP (nginx, listing manifests)', () => {
  for (const name of ['cdc_v9_cow_data_before_after', 'cdc_v9_mor_data_before_after']) {
    test(`${name}: the whole feed and each commit's`, async () => {
      const t = await HudiTable.open(`${server.url}/cdc/${name}/`);
      try {
        for (const [i, f] of feedsOf(expectedFeeds(name)).entries()) {
          const { table, stats } = await t.changesArrow({ start: f.start, end: f.end });
          assert.deepEqual(sortedFeed(arrowFeedRows(table)), f.rows, `(${f.start}, ${f.end}]`);
          // The first read fetches; later ones find the files this handle read already.
          if (i === 0) assert.ok(stats.planIo.requests > 0 && stats.readIo.requests > 0 && stats.readIo.bytes > 0, JSON.stringify(stats));
        }
      } finally {
        t.close();
      }
    });
  }
});

test('changes(): each change as an object, images parsed from the JSON Spark returns', async () => {
  const name = 'cdc_v9_mor_data_before_after';
  const exp = expectedFeeds(name);
  const t = await HudiTable.openZip(cdcZip(name), `${name}.zip`);
  try {
    const [whole] = feedsOf(exp);
    const got = [];
    for await (const c of t.changes({ start: whole.start, end: whole.end })) {
      assert.equal(c.instant, c.tsMs);
      got.push(c);
    }
    const parse = (v) => (v === null ? null : JSON.parse(v));
    const want = whole.rows.map(([op, ts, before, after]) => ({ op, tsMs: ts, instant: ts, before: parse(before), after: parse(after) }));
    const order = (list) => [...list].sort((a, b) => (JSON.stringify(a) < JSON.stringify(b) ? -1 : 1));
    assert.deepEqual(order(got), order(want));
    assert.ok(got.some((c) => c.op === 'u' && c.before && c.after && c.before.id === c.after.id));
    assert.ok(got.some((c) => c.op === 'd' && c.after === null) && got.some((c) => c.op === 'i' && c.before === null));
    // Oldest commit first.
    const times = got.map((c) => c.tsMs);
    assert.deepEqual(times, [...times].sort());
    // An abort before the read, or between two changes, ends it with an AbortedError.
    const controller = new AbortController();
    controller.abort();
    await assert.rejects(async () => {
      for await (const _ of t.changes({ signal: controller.signal })) assert.fail('no change after an abort');
    }, (e) => e instanceof AbortedError && e.code === 'ABORTED');
    const midway = new AbortController();
    let seen = 0;
    await assert.rejects(async () => {
      for await (const _ of t.changes({ signal: midway.signal })) if (++seen === 3) midway.abort();
    }, (e) => e instanceof AbortedError && e.code === 'ABORTED');
    assert.equal(seen, 3);
  } finally {
    t.close();
  }
});

test('onProgress: changesArrow() counts file-group changes read; changes() reads only as far as the loop asks', async () => {
  const name = 'cdc_v9_mor_data_before_after';
  const url = `${server.url}/cdc/${name}/`;
  const whole = await HudiTable.open(url);
  const plan = await whole.changePlan();
  const seen = [];
  const { table, stats } = await whole.changesArrow({ onProgress: (p) => seen.push(p) });
  whole.close();
  assert.ok(plan.splits.length > 8, `${plan.splits.length} file-group changes: more than are read at once`);
  const last = seen.at(-1);
  assert.deepEqual([last.filesDone, last.filesTotal], [plan.splits.length, plan.splits.length]);
  assert.equal(last.requests, stats.planIo.requests + stats.readIo.requests);
  assert.equal(last.bytes, stats.planIo.bytes + stats.readIo.bytes);
  for (const [a, b] of seen.slice(1).map((p, i) => [seen[i], p])) {
    assert.ok(b.filesDone >= a.filesDone && b.requests >= a.requests && b.bytes >= a.bytes, JSON.stringify([a, b]));
  }
  assert.ok(seen.some((p) => p.filesDone > 0 && p.filesDone < p.filesTotal), 'progress between the first and the last change');

  // Streamed: the first change arrives while most file-group changes are still unread, and a
  // loop that stops there leaves them unread.
  const early = await HudiTable.open(url);
  const progress = [];
  let first;
  for await (const c of early.changes({ onProgress: (p) => progress.push(p) })) {
    first = { change: c, at: progress.at(-1) };
    break;
  }
  assert.ok(first.change.op && first.at.filesTotal === plan.splits.length, JSON.stringify(first));
  assert.ok(first.at.filesDone < first.at.filesTotal, JSON.stringify(first.at));
  const stopped = early.io();
  early.close();
  const full = await HudiTable.open(url);
  let rows = 0;
  for await (const _ of full.changes()) rows++;
  assert.equal(rows, table.numRows);
  assert.ok(stopped.requests < full.io().requests, `stopped early: ${stopped.requests} requests, whole feed: ${full.io().requests}`);
  full.close();
});

test('changePlan(): where each commit is read from, with Date and ISO-8601 bounds', async () => {
  for (const [name, cases] of [
    ['cdc_v9_cow_data_before_after', ['AS_IS', 'BASE_FILE_INSERT', 'REPLACE_COMMIT']],
    ['cdc_v9_mor_data_before_after', ['BASE_FILE_INSERT', 'LOG_FILE', 'REPLACE_COMMIT']],
  ]) {
    const exp = expectedFeeds(name);
    const t = await HudiTable.openZip(cdcZip(name), `${name}.zip`);
    try {
      const plan = await t.changePlan();
      assert.equal(plan.mode.toLowerCase(), 'data_before_after');
      for (const c of cases) assert.ok(plan.splits.some((s) => s.case === c), `${name}: a ${c} split`);
      // Every commit whose feed has rows is planned, oldest first.
      const changed = exp.feeds.slice(1).filter((f) => f.rows.length).map((f) => f.end);
      for (const i of changed) assert.ok(plan.instants.includes(i), `${name}: ${i} planned`);
      assert.deepEqual(plan.instants, [...plan.instants].sort());
      for (const s of plan.splits) assert.ok(plan.instants.includes(s.instant) && s.fileId && Array.isArray(s.files), JSON.stringify(s));
      // One commit by its times as Date / ISO-8601 text (the timeline's clock, UTC here).
      const f = exp.feeds[3];
      const iso = (t) => `${t.slice(0, 4)}-${t.slice(4, 6)}-${t.slice(6, 8)}T${t.slice(8, 10)}:${t.slice(10, 12)}:${t.slice(12, 14)}.${t.slice(14, 17)}`;
      const { table } = await t.changesArrow({ start: new Date(`${iso(f.start)}Z`), end: iso(f.end) });
      assert.deepEqual(sortedFeed(arrowFeedRows(table)), sortedFeed(f.rows));
    } finally {
      t.close();
    }
  }
});

test('a table without change data capture: an UnsupportedError that says what to use instead', async () => {
  const t = await HudiTable.open(`${server.url}/tables/${V9}/`);
  try {
    for (const call of [() => t.changesArrow(), () => t.changePlan(), async () => {
      for await (const _ of t.changes()) assert.fail('no change');
    }]) {
      await assert.rejects(call, (e) => {
        assert.ok(e instanceof UnsupportedError, e);
        assert.equal(e.code, 'UNSUPPORTED');
        assert.match(e.message, /hoodie\.table\.cdc\.enabled/);
        assert.match(e.message, /incremental/);
        return true;
      });
    }
    // The table still reads.
    assert.ok((await t.rows()).length > 0);
  } finally {
    t.close();
  }
});
