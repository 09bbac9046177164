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
export const canonical = (rows, keyFields = []) =>
  rows
    .map((r) => [keyOf(r, keyFields), r._hoodie_partition_path ?? '', JSON.stringify(r), r])
    .sort((a, b) => cmp(a[0], b[0]) || cmp(a[1], b[1]) || cmp(a[2], b[2]))
    .map((x) => x[3]);
export const pairs = (rows, keyFields) =>
  canonical(rows, keyFields).map((r) => [keyOf(r, keyFields), r._hoodie_partition_path ?? '']).sort();

/** The fixtures' value encoding (binary as hex, maps as [key, value] pairs) from the
 *  package's JSON rows (binary as base64, maps as objects), for the columns whose type in the
 *  expected file's `schema` says so. */
export function oracleEncoding(rows, schema) {
  const binary = schema.filter((f) => f.type === 'binary' || f.type === 'large_binary').map((f) => f.name);
  const maps = schema.filter((f) => f.type.startsWith('map<')).map((f) => f.name);
  const hex = (b64) => Array.from(atob(b64), (c) => c.charCodeAt(0).toString(16).padStart(2, '0')).join('');
  return rows.map((r) => {
    const c = { ...r };
    for (const k of binary) if (typeof c[k] === 'string') c[k] = hex(c[k]);
    for (const k of maps) if (c[k] && typeof c[k] === 'object' && !Array.isArray(c[k])) c[k] = Object.entries(c[k]);
    return c;
  });
}

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

// ---- tests/data/oracle_allowances.json (the caller loads it: no file access here). The same
// rules as tests/common/oracle.rs: every value as the oracle wrote it unless an allowance
// naming a README entry says otherwise.

function applies(a, name, exp) {
  if (a.fixtures) return a.fixtures.includes(name);
  if (a.table_version_at_least !== undefined) return (exp.table.table_version ?? 0) >= a.table_version_at_least;
  if (a.populate_meta_fields !== undefined) return (exp.table.populate_meta_fields ?? true) === a.populate_meta_fields;
  return false;
}
export function allowance(spec, rule, name, exp, read) {
  if (!spec?.allowances) throw new Error('fixture checks need tests/data/oracle_allowances.json');
  return spec.allowances.find((a) => a.rule === rule && a.reads.includes(read) && applies(a, name, exp));
}

const pairOf = (row, keys) => [keyOf(row, keys), row._hoodie_partition_path ?? ''];
const pairKey = (p) => JSON.stringify([p[0], p[1] ?? '']);

/// Every read the expected file of `name` pins down, with its full rows (or the error).
export function expectedReads(spec, name, exp) {
  const keys = exp.table.record_key_fields ?? [];
  const lenient = (read) => allowance(spec, 'int64_read_as_string', name, exp, read)?.columns[name] ?? [];
  const rows = (rows, read) => ({ rows, int64AsString: lenient(read) });
  const out = [{ what: 'snapshot', options: {}, want: rows(exp.snapshot.rows, 'snapshot') }];
  for (const tt of exp.time_travel ?? []) out.push({ what: `time travel as of ${tt.as_of}`, options: { asOf: tt.as_of }, want: rows(tt.rows, 'time_travel') });

  // Incremental rows: the oracle lists keys only; the rows are the ones time travel to the
  // range's end shows with a commit time inside the range (checked against its keys).
  const byCompletion = !!allowance(spec, 'incremental_by_completion_time', name, exp, 'incremental');
  const refused = allowance(spec, 'incremental_refused_without_meta_fields', name, exp, 'incremental');
  const completed = exp.timeline_folder.completed.map((c) => [c.instant_time, byCompletion ? c.completion_time : c.instant_time]);
  for (const r of (byCompletion ? exp.incremental_by_completion_time : exp.incremental) ?? []) {
    const options = { query: 'incremental', start: r.start, ...(r.end ? { end: r.end } : {}) };
    const what = `incremental (${r.start}, ${r.end}]`;
    if (refused) {
      out.push({ what, options, want: { error: refused.error } });
      continue;
    }
    const beforeEnd = (b) => r.end == null || b <= r.end;
    const inRange = new Set(completed.filter(([, b]) => b > r.start && beforeEnd(b)).map(([i]) => i));
    let source = exp.snapshot.rows;
    if (r.end != null) {
      const visible = new Set(completed.filter(([, b]) => beforeEnd(b)).map(([i]) => i));
      const tt = (exp.time_travel ?? []).filter((t) => visible.has(t.as_of)).sort((a, b) => (a.as_of < b.as_of ? -1 : 1)).pop();
      source = tt ? tt.rows : [];
    }
    const want = source.filter((row) => inRange.has(row._hoodie_commit_time));
    same(
      want.map((w) => pairKey(pairOf(w, keys))).sort(),
      r.keys_with_partition.map(pairKey).sort(),
      `${name} ${what}: rows derived from time travel disagree with the oracle's keys`,
    );
    out.push({ what, options, want: rows(want, 'incremental') });
  }

  if (exp.read_optimized) out.push({ what: 'read-optimized', options: { query: 'read_optimized' }, want: rows(exp.read_optimized.rows, 'read_optimized') });

  for (const f of exp.filters ?? []) {
    const what = `filter ${JSON.stringify(f.filters)}`;
    let want = f.rows;
    if (f.matches_python_filter_of_snapshot !== true) {
      if (!allowance(spec, 'filter_rows_from_snapshot', name, exp, 'filter')) {
        throw new Error(`${name} ${what}: the oracle's rows disagree with its own filter and no allowance explains it`);
      }
      const wanted = new Set(f.python_filter_of_snapshot_keys.map(pairKey));
      want = exp.snapshot.rows.filter((row) => wanted.has(pairKey(pairOf(row, keys))));
    }
    out.push({ what, options: { filters: f.filters }, want: rows(want, 'filter') });
  }
  return out;
}

/// `got` equals `want` row for row, value for value; `int64AsString` columns may hold an
/// integer where the oracle has its text (D4, only where the allowances say so).
export function sameRows(name, exp, got, want, what, int64AsString = []) {
  const keys = exp.table.record_key_fields ?? [];
  const w = canonical(want, keys);
  const g = canonical(
    got.map((r) => {
      const c = { ...r };
      for (const col of int64AsString) if (Number.isInteger(c[col])) c[col] = String(c[col]);
      return c;
    }),
    keys,
  );
  same(g.length, w.length, `${name} ${what}: row count`);
  same(g, w, `${name} ${what}`);
}

/// The latest snapshot only (what the cross-runtime tests check), strictly.
export async function checkSnapshot(name, table, exp) {
  sameRows(name, exp, await readRows(table, {}), exp.snapshot.rows, 'snapshot');
}

/// The latest file slices as (partition, file id, base file, logs), sorted.
export function fileSlices(layout) {
  return layout.partitions
    .flatMap((p) => p.fileGroups.map((g) => g.slices[g.slices.length - 1]).map((s, i) => [p.partition, p.fileGroups[i].fileId, s.baseFile?.name ?? '', s.logFiles.map((l) => l.name).sort()]))
    .sort((a, b) => cmp(JSON.stringify(a), JSON.stringify(b)));
}
export const expectedFileSlices = (exp) =>
  (exp.snapshot_file_slices ?? [])
    .map((s) => [s.partition_path, s.file_id, s.base_file_name ?? '', [...s.log_file_names].sort()])
    .sort((a, b) => cmp(JSON.stringify(a), JSON.stringify(b)));

const commitFacts = (c) => [c.instant, c.action, c.operation, c.totals, [...c.files].sort(), c.replaced.map((r) => JSON.stringify(r)).sort()];

/// Every expectation of a fixture: timeline, latest file slices, commit metadata, every read.
export async function check(name, table, exp, spec) {
  const v8plus = exp.table.table_version >= 8;
  const timeline = await table.timeline(false);
  const completed = timeline.instants.filter((i) => i.state === 'completed');
  same(
    completed.map((i) => [i.requestedTime, i.action, ...(v8plus ? [i.completionTime] : [])]),
    exp.timeline_folder.completed.map((c) => [c.instant_time, c.action, ...(v8plus ? [c.completion_time] : [])]),
    `${name}: timeline`,
  );

  same(fileSlices(await table.fileGroups()), expectedFileSlices(exp), `${name}: latest file slices`);

  for (const c of exp.commit_metadata ?? []) {
    const d = await table.instant(c.instant_time);
    const got = {
      instant: d.instant.requestedTime,
      action: d.instant.action,
      operation: d.operation ?? '',
      totals: [d.writes, d.inserts, d.updates, d.deletes],
      files: d.files.map((f) => f.path),
      replaced: d.replacedFileGroups.map((r) => [r.partition, r.fileId]),
    };
    const want = {
      instant: c.instant_time,
      action: c.action,
      operation: c.operationType ?? '',
      totals: [c.write_totals.numWrites, c.write_totals.numInserts, c.write_totals.numUpdateWrites, c.write_totals.numDeletes],
      files: c.files_written,
      replaced: Object.entries(c.replaced_file_ids ?? {}).flatMap(([p, ids]) => ids.map((id) => [p, id])),
    };
    same(commitFacts(got), commitFacts(want), `${name}: commit metadata of ${c.instant_time}`);
  }

  for (const read of expectedReads(spec, name, exp)) {
    if (read.want.error) {
      let error;
      try {
        await readRows(table, read.options);
      } catch (e) {
        error = e;
      }
      same(error?.code, read.want.error.code, `${name} ${read.what}: must fail`);
      if (read.want.error.message_contains && !String(error.message).includes(read.want.error.message_contains)) fail(`${name} ${read.what}`, error.message, read.want.error.message_contains);
      continue;
    }
    sameRows(name, exp, await readRows(table, read.options), read.want.rows, read.what, read.want.int64AsString);
  }
}
