// The fixture expectations (tests/data/fixtures/expected/*.json) as checks any JS runtime
// test can run against a WasmTable: the timeline, snapshot, time travel, incremental,
// read-optimized and filtered reads. Shared by the Node tests here and tests/http/ (Node,
// Chromium, workerd). No Node-only imports: it runs in browsers and workers too.

export const keyOf = (row, keyFields) => {
  if (typeof row._hoodie_record_key === 'string') return row._hoodie_record_key;
  const t = (v) => (v === null || v === undefined ? '' : typeof v === 'string' ? v : JSON.stringify(v));
  return keyFields.length === 1 ? t(row[keyFields[0]]) : keyFields.map((f) => `${f}:${t(row[f])}`).join(',');
};

const cmp = (a, b) => (a < b ? -1 : a > b ? 1 : 0);
export const canonical = (rows, keyFields) =>
  rows
    .map((r) => [keyOf(r, keyFields), r._hoodie_partition_path ?? '', JSON.stringify(r), r])
    .sort((a, b) => cmp(a[0], b[0]) || cmp(a[1], b[1]) || cmp(a[2], b[2]))
    .map((x) => x[3]);
export const pairs = (rows, keyFields) =>
  canonical(rows, keyFields).map((r) => [keyOf(r, keyFields), r._hoodie_partition_path ?? '']).sort();

// D4 (see tests/fixtures.rs): time travel reads with the schema as of the instant.
const schemaChanged = {
  'sample_table/cow/v9_timebasedkeygen_epochmillis': ['ts_millis'],
  'sample_table/cow/v9_timebasedkeygen_unixtimestamp': ['ts_epoch'],
};

export async function readRows(table, options) {
  return table.readJson(options, true);
}

// Minimal assertions so the module needs no node:assert (browsers, workerd).
function fail(message, got, want) {
  const e = new Error(`${message}\n  got:  ${JSON.stringify(got)?.slice(0, 400)}\n  want: ${JSON.stringify(want)?.slice(0, 400)}`);
  e.code = 'MISMATCH';
  throw e;
}
export function same(got, want, message) {
  if (JSON.stringify(got) !== JSON.stringify(want)) fail(message, got, want);
}

/// Rows of `want` vs `got` for a fixture, with the lenient columns of `name`.
export function sameRows(name, exp, got, want, what) {
  const keys = exp.table.record_key_fields ?? [];
  const lenient = schemaChanged[name] ?? [];
  const g = canonical(got, keys).map((r) => {
    const c = { ...r };
    for (const col of lenient) if (typeof c[col] === 'number') c[col] = String(c[col]);
    return c;
  });
  const w = canonical(want, keys);
  same(g.length, w.length, `${name} ${what}: row count`);
  same(g, w, `${name} ${what}`);
}

/// The latest snapshot only (what the cross-runtime tests check).
export async function checkSnapshot(name, table, exp) {
  sameRows(name, exp, await readRows(table, {}), exp.snapshot.rows, 'snapshot');
}

/// Every expectation of a fixture.
export async function check(name, table, exp) {
  const keys = exp.table.record_key_fields ?? [];
  const hasMeta = exp.table.populate_meta_fields !== false;
  const v8plus = exp.table.table_version >= 8;

  const timeline = await table.timeline(false);
  const completed = timeline.instants.filter((i) => i.state === 'completed').map((i) => [i.requestedTime, i.action]);
  same(completed, exp.timeline_folder.completed.map((c) => [c.instant_time, c.action]), `${name}: timeline`);

  await checkSnapshot(name, table, exp);
  for (const tt of exp.time_travel) sameRows(name, exp, await readRows(table, { asOf: tt.as_of }), tt.rows, `as of ${tt.as_of}`);
  for (const r of (v8plus ? exp.incremental_by_completion_time : exp.incremental) ?? []) {
    const options = { query: 'incremental', start: r.start, ...(r.end ? { end: r.end } : {}) };
    if (!hasMeta) {
      let code;
      try {
        await readRows(table, options);
      } catch (e) {
        code = e.code;
      }
      same(code, 'UNSUPPORTED', `${name}: incremental without meta fields`);
      continue;
    }
    const got = await readRows(table, options);
    same(pairs(got, keys), [...r.keys_with_partition].sort(), `${name}: incremental (${r.start}, ${r.end}]`);
  }
  if (exp.read_optimized) sameRows(name, exp, await readRows(table, { query: 'read_optimized' }), exp.read_optimized.rows, 'read-optimized');
  for (const f of exp.filters ?? []) {
    const got = await readRows(table, { filters: f.filters });
    const want = f.python_filter_of_snapshot_keys.map(([k, p]) => [k, hasMeta ? p : '']).sort();
    same(pairs(got, keys), want, `${name}: filter ${JSON.stringify(f.filters)}`);
  }
}
