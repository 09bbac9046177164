// The change-feed fixtures (tests/data/cdc): Spark-written CDC tables and, for each, the feeds
// Apache Hudi Spark 1.1.1's CDC query returned — the whole range and commit by commit, as
// `feeds[] = {start, end, rows: [[op, ts_ms, before, after], …]}`. One comparison for every JS
// suite: rows in the expected files' order (each cell a string; null sorts as "").
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { repo } from './harness.mjs';

export const cdcDir = join(repo, 'tests', 'data', 'cdc');

/** The CDC tables (`cdc_v9_cow_data_before_after`, …), sorted. */
export const cdcNames = () =>
  readdirSync(cdcDir)
    .filter((f) => f.endsWith('.zip'))
    .map((f) => f.slice(0, -4))
    .sort();

/** Whether a table's feeds are Apache Hudi 1.1.1's, which the engine returns row for row. The
 *  version-6 Merge-On-Read table's are Hudi 0.15.0's (1.1.1 cannot read that table's feed),
 *  which renders images its own way and gets an insert overwrite's deletes wrong: tests/cdc.rs
 *  compares that one with those allowances. */
export const sparkExact = (exp) => /Apache Hudi 1\.1\.1\b/.test(exp.read_by);

/** The expected file of a CDC table. */
export const expectedFeeds = (name) => JSON.parse(readFileSync(join(cdcDir, `${name}.json`), 'utf8'));

/** The zip of a CDC table (one top folder, the table's name). */
export const cdcZip = (name) => readFileSync(join(cdcDir, `${name}.zip`));

const cell = (v) => (v === null || v === undefined ? '' : String(v));

/** `[op, ts_ms, before, after]` rows sorted as the expected files sort them. */
export function sortedFeed(rows) {
  const key = (r) => r.map(cell);
  return [...rows].sort((a, b) => {
    const [x, y] = [key(a), key(b)];
    for (let i = 0; i < 4; i++) if (x[i] !== y[i]) return x[i] < y[i] ? -1 : 1;
    return 0;
  });
}

/** The rows of `changesArrow()`'s table (or any iterable of {op, ts_ms, before, after}). */
export const arrowFeedRows = (table) => [...table].map((r) => [r.op, r.ts_ms, r.before ?? null, r.after ?? null].map((v) => (v === null ? null : String(v))));

/** The feeds of a table worth checking: the whole range first, then each commit's. */
export function feedsOf(exp) {
  return exp.feeds.map((f) => ({ start: f.start, end: f.end, rows: sortedFeed(f.rows) }));
}
