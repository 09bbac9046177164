// SQL over the open table (and the others opened in this page, by name): DuckDB-wasm runs the
// query; hudi-edge reads each table it names into it as Arrow. DuckDB's own plan of the query
// (EXPLAIN over empty tables of the same columns) says what each table scan needs: those columns
// are read, and the simple conditions DuckDB pushed into the scan (`col op literal`, IN and
// BETWEEN as ranges, IS NULL) go to hudi-edge as filters, which prune files by Hudi's metadata
// and statistics. The WHERE stays in the SQL, so pushdown only saves reading, never decides a
// row. This module and DuckDB load only when the SQL card is opened.

import * as duckdb from '@duckdb/duckdb-wasm';
import ehWasm from '@duckdb/duckdb-wasm/dist/duckdb-eh.wasm?url';
import ehWorker from '@duckdb/duckdb-wasm/dist/duckdb-browser-eh.worker.js?url';
import type { Schema, Table, tableToIPC } from 'apache-arrow';
import type { Filter, HudiTable } from 'hudi-edge';
import type { h as H, replace as Replace, s as S } from '../dom';
import type { bytes as Bytes, count as Count, ms as Ms } from '../format';
import type { errorView as ErrorView } from './commit';

/** The viewer's helpers, handed over by main.ts: imported here, they would move out of the
 *  first-load bundle into a chunk shared with this one, and the first load would grow. */
export interface Kit {
  h: typeof H;
  s: typeof S;
  replace: typeof Replace;
  bytes: typeof Bytes;
  count: typeof Count;
  ms: typeof Ms;
  errorView: typeof ErrorView;
  tableToIPC: typeof tableToIPC;
}
let h: Kit['h'];
let s: Kit['s'];
let replace: Kit['replace'];
let bytes: Kit['bytes'];
let count: Kit['count'];
let ms: Kit['ms'];
let errorView: Kit['errorView'];
let toIPC: (t: Table) => Uint8Array;

/** Arrow type ids (apache-arrow's `Type`), compared as numbers: results come from DuckDB's own
 *  copy of apache-arrow. */
const T = { Int: 2, Float: 3, Decimal: 7, Date: 8, Timestamp: 10 };
/** An Arrow type of either apache-arrow copy. */
type ArrowType = { typeId: number; scale?: number };
const isNumeric = (t: ArrowType) => t.typeId === T.Int || t.typeId === T.Float || t.typeId === T.Decimal;

/** A table the SQL can name: the open one, or one opened earlier in this page (opened again
 *  on first use). */
export interface SqlSource {
  name: string;
  label: string;
  table: () => Promise<HudiTable>;
}

const PAGE = 50;

// The card's styles come with its module: the viewer's first-load CSS stays as it is.
const CSS = `
.sql-input { width: 100%; box-sizing: border-box; font-family: var(--mono); font-size: 13px; padding: 8px 10px; border: 1px solid var(--line); border-radius: 6px; resize: vertical; }
.sql .query-row { margin: 8px 0; }
.sql-chart { margin: 12px 0; max-width: 720px; }
.sql-chart .bar { fill: #3b82f6; }
.sql-chart .axis { stroke: #94a3b8; }
.sql-chart text { font-size: 11px; fill: var(--ink-2); }
.sql-plan { background: #f8fafc; border: 1px solid var(--line); border-radius: 6px; padding: 8px 10px; font-size: 11px; line-height: 1.25; overflow: auto; max-height: 420px; }
.sql-feeds { width: auto; margin-bottom: 8px; }
`;

/** What feeding one table cost, and what was pushed to hudi-edge. */
interface Feed {
  name: string;
  columns: string[] | null;
  filters: Filter[];
  rows: number;
  requests: number;
  bytes: number;
  ms: number;
  cached: boolean;
}

const quote = (name: string) => `"${name.replaceAll('"', '""')}"`;
/** The schema of the empty tables DuckDB plans on. */
const PLAN = 'hudi_plan';

/** A condition DuckDB pushed into a table scan, as hudi-edge takes it, or null: `col op
 *  literal` with a number, a string or a boolean, and IS [NOT] NULL. DuckDB has resolved the
 *  literal to the column's type already; a date, a cast or a function stays DuckDB's alone. */
function scanFilter(text: string): Filter | null {
  const col = String.raw`("(?:[^"]|"")+"|[A-Za-z_][\w$]*)`;
  const lit = String.raw`'(?:[^']|'')*'|-?\d+(?:\.\d+)?(?:e[+-]?\d+)?|true|false`;
  const name = (c: string) => (c.startsWith('"') ? c.slice(1, -1).replaceAll('""', '"') : c);
  const value = (l: string) => {
    const v = l.startsWith("'") ? l.slice(1, -1).replaceAll("''", "'") : /^(true|false)$/i.test(l) ? l.toLowerCase() === 'true' : Number(l);
    // A number JS cannot hold exactly would filter on another value.
    return typeof v === 'number' && !(Number.isFinite(v) && (Math.abs(v) <= Number.MAX_SAFE_INTEGER || !Number.isInteger(v))) ? undefined : v;
  };
  // `optional:` marks a filter DuckDB also applies above the scan (an IN list): still a
  // condition every row of the result meets.
  const f = text.replace(/^optional:\s*/, '');
  const nulls = new RegExp(String.raw`^\(?${col} IS (NOT )?NULL\)?$`).exec(f);
  if (nulls) return [name(nulls[1]!), nulls[2] ? 'is not null' : 'is null'];
  const inList = new RegExp(String.raw`^${col} IN \(((?:${lit})(?:, (?:${lit}))*)\)$`, 'i').exec(f);
  if (inList) {
    const values = [...inList[2]!.matchAll(new RegExp(lit, 'gi'))].map((m) => value(m[0]));
    return values.every((v) => v !== undefined) ? [name(inList[1]!), 'in', values] : null;
  }
  const m = new RegExp(String.raw`^${col}\s*(=|!=|<>|<=|>=|<|>)\s*(${lit})$`, 'i').exec(f);
  if (!m) return null;
  const v = value(m[3]!);
  return v === undefined ? null : [name(m[1]!), m[2] === '<>' ? '!=' : m[2]!, v];
}

/** The parts of a scan's filter text joined by AND, outside quotes. */
function conjuncts(text: string): string[] {
  const out: string[] = [];
  let quoted: string | null = null;
  let from = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!;
    if (quoted) quoted = c === quoted ? null : quoted;
    else if (c === "'" || c === '"') quoted = c;
    else if (text.startsWith(' AND ', i)) {
      out.push(text.slice(from, i));
      from = i + 5;
    }
  }
  return [...out, text.slice(from)];
}

/** What each table scan in DuckDB's plan reads: the columns, and the conditions it pushed. */
interface Scan {
  columns: Set<string>;
  filters: Filter[];
  scans: number;
}

/** The scans of a JSON physical plan, by table. */
function scans(plan: unknown, out = new Map<string, Scan>()): Map<string, Scan> {
  for (const node of Array.isArray(plan) ? plan : [plan]) {
    if (!node || typeof node !== 'object') continue;
    const { name, extra_info: info, children } = node as { name?: string; extra_info?: Record<string, unknown>; children?: unknown[] };
    if (name?.trim() === 'SEQ_SCAN' && typeof info?.Table === 'string') {
      const s = out.get(info.Table) ?? { columns: new Set<string>(), filters: [], scans: 0 };
      s.scans++;
      const list = (v: unknown) => (Array.isArray(v) ? v.map(String) : typeof v === 'string' ? v.split('\n') : []);
      for (const c of list(info.Projections)) s.columns.add(c.trim());
      for (const f of list(info.Filters).flatMap(conjuncts)) {
        const pushed = scanFilter(f.trim());
        if (pushed) s.filters.push(pushed);
        // The columns a filter uses are read even when the filter itself is not pushed.
        for (const m of f.matchAll(/"((?:[^"]|"")+)"|\b([A-Za-z_][\w$]*)\b/g)) s.columns.add(m[1] ? m[1].replaceAll('""', '"') : m[2]!);
      }
      out.set(info.Table, s);
    }
    scans(children ?? [], out);
  }
  return out;
}

// ---------------------------------------------------------------------------------------
// Values for people

function decimalText(words: Uint32Array, scale: number): string {
  let v = 0n;
  for (let i = words.length - 1; i >= 0; i--) v = (v << 32n) | BigInt(words[i]!);
  if (words.length && words[words.length - 1]! & 0x80000000) v -= 1n << BigInt(32 * words.length);
  const neg = v < 0n;
  const digits = (neg ? -v : v).toString().padStart(scale + 1, '0');
  const text = scale ? `${digits.slice(0, -scale)}.${digits.slice(-scale)}` : digits;
  return neg ? `-${text}` : text;
}

/** A result value as text (null stays null), by its Arrow type. */
function valueText(v: unknown, type: ArrowType): string | null {
  if (v === null || v === undefined) return null;
  if (type.typeId === T.Decimal && v instanceof Uint32Array) return decimalText(v, type.scale ?? 0);
  if (type.typeId === T.Timestamp && typeof v === 'number') return new Date(v).toISOString().replace('T', ' ').replace('Z', '');
  if (type.typeId === T.Date && typeof v === 'number') return new Date(v).toISOString().slice(0, 10);
  if (typeof v === 'object') return JSON.stringify(v, (_, x) => (typeof x === 'bigint' ? x.toString() : x));
  return String(v);
}

// ---------------------------------------------------------------------------------------
// The panel

interface Result {
  columns: { name: string; type: ArrowType }[];
  rows: (string | null)[][];
  numeric: boolean[];
}

export class SqlPanel {
  readonly el: HTMLElement;
  private readonly input: HTMLTextAreaElement;
  private readonly runButton: HTMLButtonElement;
  private readonly status: HTMLElement;
  private readonly results: HTMLElement;
  private readonly chart: HTMLElement;
  private readonly below: HTMLElement;
  private db: Promise<{ db: duckdb.AsyncDuckDB; conn: duckdb.AsyncDuckDBConnection; ms: number }> | null = null;
  private readonly tables = new Map<string, Promise<HudiTable>>();
  private readonly schemas = new Map<string, Promise<Schema>>();
  /** What each DuckDB table holds now (the read's options): the same read is not repeated. */
  private readonly loaded = new Map<string, string>();
  private running = false;

  constructor(kit: Kit, private readonly sources: () => SqlSource[], example: string) {
    ({ h, s, replace, bytes, count, ms, errorView } = kit);
    toIPC = (t) => kit.tableToIPC(t, 'stream');
    if (!document.getElementById('sql-style')) document.head.append(h('style', { id: 'sql-style' }, CSS));
    this.input = h('textarea', { class: 'sql-input', 'data-testid': 'sql-input', spellcheck: 'false', rows: 5, onkeydown: (e: KeyboardEvent) => (e.ctrlKey || e.metaKey) && e.key === 'Enter' && void this.run() }, example) as HTMLTextAreaElement;
    this.runButton = h('button', { type: 'button', class: 'primary', 'data-testid': 'sql-run', onclick: () => void this.run() }, 'Run');
    this.status = h('div', { class: 'status muted', 'data-testid': 'sql-status' });
    this.results = h('div', { class: 'results', 'data-testid': 'sql-results' });
    this.chart = h('div', { class: 'sql-chart-slot' });
    this.below = h('div', { class: 'sql-below' });
    this.el = h('div', { class: 'sql', 'data-state': 'idle' },
      h('p', { class: 'muted', 'data-testid': 'sql-tables' }, 'Tables: ', this.sources().map((t, i) => [i ? ', ' : '', h('code', null, t.name), ` (${t.label})`]), '. Ctrl+Enter runs.'),
      this.input,
      h('div', { class: 'query-row' }, this.runButton),
      this.status, this.results, this.chart, this.below);
  }

  private duck() {
    this.db ??= (async () => {
      const t0 = performance.now();
      const worker = new Worker(ehWorker);
      const db = new duckdb.AsyncDuckDB(new duckdb.VoidLogger(), worker);
      await db.instantiate(ehWasm);
      const conn = await db.connect();
      // No extension downloads: the page reads only from the table's storage.
      await conn.query('SET autoinstall_known_extensions = false; SET autoload_known_extensions = false;').catch(() => {});
      await conn.query(`CREATE SCHEMA ${PLAN}`);
      return { db, conn, ms: performance.now() - t0 };
    })();
    return this.db;
  }

  /** Ends DuckDB's worker and closes the tables this panel opened (not the shown one). */
  close() {
    void this.db?.then(({ db }) => db.terminate());
    for (const src of this.sources()) if (src.label !== 'open' && !src.label.startsWith('= ')) void this.tables.get(src.name)?.then((t) => t.close(), () => {});
  }

  private source(name: string) {
    return this.sources().find((t) => t.name.toLowerCase() === name.toLowerCase()) ?? null;
  }

  private table(src: SqlSource) {
    if (!this.tables.has(src.name)) this.tables.set(src.name, src.table());
    return this.tables.get(src.name)!;
  }

  /** The table's Arrow schema (a read of no rows), to know which names are its columns. */
  private schema(src: SqlSource) {
    if (!this.schemas.has(src.name)) this.schemas.set(src.name, this.table(src).then((t) => t.read({ limit: 0 })).then((t) => t.schema));
    return this.schemas.get(src.name)!;
  }

  /** An empty table of `src`'s columns under its name in the schema DuckDB plans in (the
   *  tables of the main schema hold what the last query read: some columns, some rows). */
  private async placeholder(conn: duckdb.AsyncDuckDBConnection, src: SqlSource) {
    const empty = await this.table(src).then((t) => t.read({ limit: 0 }));
    await conn.insertArrowFromIPCStream(toIPC(empty), { schema: PLAN, name: src.name, create: true });
    this.schemas.set(src.name, Promise.resolve(empty.schema));
  }

  /** Reads `src` into DuckDB as a table of its name: the columns DuckDB's scan reads (all when
   *  unknown) and the conditions it pushed into the scan. */
  private async feed(conn: duckdb.AsyncDuckDBConnection, src: SqlSource, scan: Scan | null): Promise<Feed> {
    const table = await this.table(src);
    const schema = await this.schema(src);
    const names = schema.fields.map((f) => f.name);
    let cols = scan ? names.filter((n) => scan.columns.has(n)) : null;
    // A query that names no column (count(*)) still needs the rows: the narrowest read is one column.
    if (cols && !cols.length) cols = [names[0]!];
    if (cols && cols.length === names.length) cols = null;
    // A table scanned more than once (a self-join) gets no filter: each scan has its own.
    const filters = scan && scan.scans === 1 ? scan.filters.filter((f) => names.includes(f[0] as string)) : [];
    const key = JSON.stringify([cols, filters]);
    const base: Feed = { name: src.name, columns: cols, filters, rows: 0, requests: 0, bytes: 0, ms: 0, cached: true };
    if (this.loaded.get(src.name) === key) return base;
    const t0 = performance.now();
    const before = table.io();
    const arrow = await table.read({ ...(cols ? { columns: cols } : {}), ...(filters.length ? { filters } : {}) });
    const after = table.io();
    this.loaded.delete(src.name);
    await conn.query(`DROP TABLE IF EXISTS ${quote(src.name)}`);
    await conn.insertArrowFromIPCStream(toIPC(arrow), { name: src.name, create: true });
    this.loaded.set(src.name, key);
    return { ...base, rows: arrow.numRows, requests: after.requests - before.requests, bytes: after.bytes - before.bytes, ms: performance.now() - t0, cached: false };
  }

  /** DuckDB's plan of `sql` over empty tables of the same columns: which tables it scans, with
   *  what. Null when it cannot be planned (not a query, bad SQL). */
  private async plan(conn: duckdb.AsyncDuckDBConnection, sql: string): Promise<Map<string, Scan> | null> {
    const made = new Set<string>();
    // On empty tables the statistics would plan an empty result instead of the scans.
    await conn.query(`SET disabled_optimizers = 'statistics_propagation'; SET search_path = '${PLAN}'`);
    try {
      for (let attempt = 0; attempt < 16; attempt++) {
        try {
          const r = await conn.query(`EXPLAIN (FORMAT JSON) ${sql}`);
          return scans(JSON.parse(String(r.getChild('explain_value')?.get(0))));
        } catch (e) {
          const src = this.missing(e);
          if (!src || made.has(src.name)) return null;
          made.add(src.name);
          await this.placeholder(conn, src);
        }
      }
      return null;
    } finally {
      await conn.query('RESET disabled_optimizers; RESET search_path');
    }
  }

  /** Our table that DuckDB's error says it does not have. */
  private missing(e: unknown) {
    const name = /Table with name "?([^"\s]+)"? does not exist/.exec((e as Error).message ?? '')?.[1];
    return name ? this.source(name) : null;
  }

  async run() {
    if (this.running) return;
    this.running = true;
    this.el.dataset.state = 'running';
    this.runButton.disabled = true;
    const sql = this.input.value.trim().replace(/;\s*$/, '');
    replace(this.chart);
    replace(this.below);
    const t0 = performance.now();
    try {
      const first = !this.db;
      replace(this.status, h('span', null, first ? 'loading DuckDB…' : 'running…'));
      const { conn, ms: initMs } = await this.duck();
      const feeds: Feed[] = [];
      replace(this.status, h('span', null, 'planning…'));
      const planned = await this.plan(conn, sql);
      for (const [name, scan] of planned ?? []) {
        const src = this.source(name);
        if (src) {
          replace(this.status, h('span', null, `reading ${name}…`));
          feeds.push(await this.feed(conn, src, scan));
        }
      }
      // Not planned (EXPLAIN, SHOW, …): a table DuckDB does not know yet is read whole when it
      // is one of ours, and the statement tried again.
      let result: Awaited<ReturnType<typeof conn.query>> | null = null;
      for (let attempt = 0; !result; attempt++) {
        try {
          result = await conn.query(sql);
        } catch (e) {
          const src = attempt < 8 ? this.missing(e) : null;
          if (!src || feeds.some((f) => f.name === src.name)) throw e;
          feeds.push(await this.feed(conn, src, null));
        }
      }
      const took = performance.now() - t0;
      const shown = this.toResult(result);
      this.showPage(shown, 0);
      this.showChart(shown);
      const plan = planned ? await conn.query(`EXPLAIN ${sql}`).then((p) => String(p.getChild('explain_value')?.get(0) ?? '')).catch(() => '') : '';
      this.showBelow(plan, feeds);
      replace(this.status, h('span', { 'data-testid': 'sql-summary' }, `${count(shown.rows.length)} rows in ${ms(took)}`, first ? ` (DuckDB loaded in ${ms(initMs)})` : ''));
      this.el.dataset.state = 'done';
    } catch (e) {
      replace(this.results, h('div', { 'data-testid': 'sql-error' }, errorView(e, 'The query failed')));
      replace(this.status, h('span', null, 'failed'));
      this.el.dataset.state = 'error';
    } finally {
      this.running = false;
      this.runButton.disabled = false;
    }
  }

  private toResult(t: { schema: { fields: { name: string; type: ArrowType }[] }; numRows: number; getChildAt: (i: number) => { get: (i: number) => unknown } | null }): Result {
    const columns = t.schema.fields.map((f) => ({ name: f.name, type: f.type }));
    const vectors = columns.map((_, i) => t.getChildAt(i));
    const rows: (string | null)[][] = [];
    for (let r = 0; r < t.numRows; r++) rows.push(columns.map((c, i) => valueText(vectors[i]?.get(r), c.type)));
    const numeric = columns.map((c) => isNumeric(c.type));
    return { columns, rows, numeric };
  }

  private showPage(r: Result, page: number) {
    if (!r.columns.length) return replace(this.results, h('div', { class: 'empty' }, 'Done (no result set).'));
    if (!r.rows.length) return replace(this.results, h('div', { class: 'empty' }, 'No rows.'));
    const pages = Math.ceil(r.rows.length / PAGE);
    const from = page * PAGE;
    const nav = pages > 1
      ? h('div', { class: 'pager' },
          h('button', { type: 'button', class: 'small-btn', 'data-testid': 'sql-prev', disabled: page === 0, onclick: () => this.showPage(r, page - 1) }, '‹ prev'),
          h('span', { 'data-testid': 'sql-page' }, ` page ${page + 1} of ${pages} `),
          h('button', { type: 'button', class: 'small-btn', 'data-testid': 'sql-next', disabled: page + 1 >= pages, onclick: () => this.showPage(r, page + 1) }, 'next ›'))
      : null;
    replace(
      this.results,
      h('div', { class: 'table-scroll' },
        h('table', { class: 'grid-table rows' },
          h('thead', null, h('tr', null, h('th', { class: 'rownum' }, '#'), r.columns.map((c) => h('th', null, c.name)))),
          h('tbody', null, r.rows.slice(from, from + PAGE).map((row, n) =>
            h('tr', { 'data-testid': 'sql-row' }, h('td', { class: 'rownum' }, from + n + 1), row.map((v, i) => h('td', { class: r.numeric[i] ? 'num' : '' }, v === null ? h('span', { class: 'null' }, 'null') : v))))))),
      nav,
    );
  }

  /** A bar chart for a label and a number. */
  private showChart(r: Result) {
    if (r.columns.length !== 2 || !r.numeric[1] || !r.rows.length) return;
    const data = r.rows.slice(0, 60).map(([label, v]) => ({ label: label ?? 'null', v: Number(v ?? 0) }));
    const max = Math.max(0, ...data.map((d) => d.v));
    const min = Math.min(0, ...data.map((d) => d.v));
    const [W, H, pad] = [640, 220, 28];
    const bw = (W - 2 * pad) / data.length;
    const y = (v: number) => pad + ((max - v) / (max - min || 1)) * (H - 2 * pad);
    replace(
      this.chart,
      h('figure', { class: 'sql-chart', 'data-testid': 'sql-chart' },
        s('svg', { viewBox: `0 0 ${W} ${H}`, width: '100%', role: 'img', 'aria-label': `${r.columns[1]!.name} by ${r.columns[0]!.name}` },
          s('line', { x1: pad, x2: W - pad, y1: y(0), y2: y(0), class: 'axis' }),
          data.map((d, i) => s('g', { 'data-testid': 'sql-bar' },
            s('rect', { x: pad + i * bw + 2, width: Math.max(1, bw - 4), y: Math.min(y(d.v), y(0)), height: Math.abs(y(0) - y(d.v)), class: 'bar' }, s('title', null, `${d.label}: ${d.v}`)),
            bw >= 24 ? s('text', { x: pad + (i + 0.5) * bw, y: H - 8, 'text-anchor': 'middle', class: 'label' }, d.label.slice(0, Math.floor(bw / 7))) : null,
            s('text', { x: pad + (i + 0.5) * bw, y: Math.min(y(d.v), y(0)) - 4, 'text-anchor': 'middle', class: 'value' }, String(d.v))))),
        h('figcaption', { class: 'muted' }, `${r.columns[1]!.name} by ${r.columns[0]!.name}${r.rows.length > data.length ? ` (first ${data.length} rows)` : ''}`)),
    );
  }

  private showBelow(plan: string, feeds: Feed[]) {
    const requests = feeds.reduce((n, f) => n + f.requests, 0);
    const total = feeds.reduce((n, f) => n + f.bytes, 0);
    const fmt = (f: Filter) => (Array.isArray(f) ? `${f[0]} ${f[1]}${f.length > 2 ? ` ${JSON.stringify(f[2])}` : ''}` : f);
    replace(
      this.below,
      h('h3', null, 'Cost'),
      h('p', { 'data-testid': 'sql-cost', 'data-requests': String(requests), 'data-bytes': String(total) }, `hudi-edge read ${count(requests)} requests · ${bytes(total)} to feed DuckDB`, feeds.length && !requests ? ' (all from its cache of this table\'s files)' : ''),
      feeds.length
        ? h('table', { class: 'grid-table sql-feeds' },
            h('thead', null, h('tr', null, ['table', 'columns read', 'filters pushed', 'rows', 'requests', 'bytes', 'time'].map((c) => h('th', null, c)))),
            h('tbody', null, feeds.map((f) =>
              h('tr', { 'data-testid': 'sql-feed', 'data-table': f.name, 'data-requests': String(f.requests), 'data-filters': JSON.stringify(f.filters) },
                h('td', null, h('code', null, f.name)),
                h('td', null, f.columns ? f.columns.join(', ') : 'all'),
                h('td', { 'data-testid': 'sql-pushed' }, f.filters.length ? f.filters.map(fmt).join(' and ') : '—'),
                f.cached ? h('td', { colspan: 4, class: 'muted' }, 'already in DuckDB (same read as before)') : [h('td', { class: 'num' }, count(f.rows)), h('td', { class: 'num' }, count(f.requests)), h('td', { class: 'num' }, bytes(f.bytes)), h('td', { class: 'num' }, ms(f.ms))]))))
        : h('p', { class: 'muted' }, 'No hudi-edge table was read.'),
      plan ? [h('h3', null, 'Plan (DuckDB)'), h('pre', { class: 'sql-plan', 'data-testid': 'sql-plan' }, plan)] : null,
    );
  }
}
