// `HudiTable`: the package's one entry point. It opens a table (by URL, from local files, from a
// zip, or over any storage object), and answers with typed objects and apache-arrow tables.
// The engine does the work in wasm and answers in the package's shapes; aborts and progress
// are the engine's too (it takes the `signal` and `onProgress` of each call). This layer maps
// errors to classes, caches, and defers `close()` until the calls in flight finish.

import { RecordBatchReader, Table as ArrowTable, tableFromIPC, tableFromJSON, tableToIPC, type RecordBatch } from 'apache-arrow';
import type { WasmTable, ReadOptions as EngineReadOptions, TableSpec as EngineTableSpec } from './wasm/hudi_edge.js';
import { engineLoaded, fullEngine, readEngine, type Engine } from './wasm-loader.js';
import { primeOpen, primeUrlOpen } from './primed-open.js';
import { objectsTooLarge, rowsToArrow } from './rows-arrow.js';
import { arrowSchemaOf, arrowTableOf } from './arrow-input.js';
import { AbortedError, CorruptError, InvalidArgumentError, InvalidInputError, NotFoundError, ReadOnlyError, toHudiError } from './errors.js';
import { BlobStorage, type LocalFile } from './blob-storage.js';
import { isLocal, localStorageFor } from './local-tables.js';
import { engineStorage, type StorageObject } from './storage-object.js';
import type {
  Cancellable,
  RefreshOptions,
  RunServicesOptions,
  ServicesResult,
  Change,
  ChangeOptions,
  ChangePlan,
  ChangeStats,
  CommitDetail,
  CommitResult,
  DeleteKeys,
  SchemaField,
  MetadataTableFile,
  NewTableSpec,
  WriteJobOptions,
  WriteOperation,
  WriteProgress,
  WriterState,
  FileLayout,
  Filter,
  CleanOptions,
  CleanProgress,
  CleanResult,
  IndexOptions,
  IndexResult,
  ArchiveOptions,
  ArchiveResult,
  ClusterOptions,
  ClusterReport,
  CompactOptions,
  CompactReport,
  DiscoverOptions,
  Discovery,
  FixReport,
  Health,
  HealthOptions,
  Instant,
  IoStats,
  ManifestOptions,
  ManifestResult,
  OpenOptions,
  StorageOpenOptions,
  Plan,
  ReadOptions,
  Row,
  TableInfo,
  TimelineOptions,
  WriteOptions,
  WriteResult,
  WriteRows,
} from './types.js';

const READ_KEYS = [
  'query',
  'asOf',
  'start',
  'end',
  'columns',
  'filters',
  'limit',
  'dataSkipping',
  'useMetadataTable',
  'batchSize',
  'concurrency',
  'readAheadBytes',
] as const;

/** An ISO-8601 time with a zone (`Z`, `+05:30`): a point in time, not a wall-clock reading. */
const ZONED = /^\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(:\d{2}(\.\d+)?)?\s*(Z|[+-]\d{2}(:?\d{2})?)$/i;

/** A point in time as the wall-clock text of zone `timeZone` (`2026-03-07T21:54:45.000`),
 *  which the engine takes as the timeline's own clock; instants and times without a zone
 *  pass through (they are that clock already). Done here, with Intl, so that the host's
 *  zone (Node's `TZ`) never enters. */
function wallClock(v: unknown, timeZone: string): unknown {
  const at = v instanceof Date ? v.getTime() : typeof v === 'string' && ZONED.test(v.trim()) ? Date.parse(v.trim().replace(' ', 'T')) : undefined;
  if (at === undefined) return v;
  if (Number.isNaN(at)) throw new InvalidArgumentError(`invalid argument: ${v instanceof Date ? 'an invalid Date' : JSON.stringify(v)} is not a time`);
  const parts = Object.fromEntries(clock(timeZone).formatToParts(at).map((p) => [p.type, p.value]));
  const ms = String(((at % 1000) + 1000) % 1000).padStart(3, '0');
  return `${parts.year}-${parts.month}-${parts.day}T${parts.hour}:${parts.minute}:${parts.second}.${ms}`;
}

const clocks = new Map<string, Intl.DateTimeFormat>();
function clock(timeZone: string): Intl.DateTimeFormat {
  let f = clocks.get(timeZone);
  if (!f) {
    try {
      f = new Intl.DateTimeFormat('en-US', { timeZone, hourCycle: 'h23', year: 'numeric', month: '2-digit', day: '2-digit', hour: '2-digit', minute: '2-digit', second: '2-digit' });
    } catch {
      throw new InvalidArgumentError(`invalid argument: timeZone ${JSON.stringify(timeZone)} is not an IANA time zone (such as "UTC" or "Asia/Kolkata")`);
    }
    clocks.set(timeZone, f);
  }
  return f;
}

/** Read options as the engine takes them: `asOf`, `start`, `end` in the timeline's clock
 *  (zone `timeZone`), `Date` filter values as ISO-8601 text (handed over as they are, a
 *  `Date` arrives as an empty object). */
function engineReadOptions(o: ReadOptions, timeZone = 'UTC'): EngineReadOptions {
  const text = (v: unknown) => (v instanceof Date ? v.toISOString() : v);
  const filters = o.filters?.map((f): Filter => (Array.isArray(f) ? (f.map((v) => (Array.isArray(v) ? v.map(text) : text(v))) as Filter) : f));
  return { ...o, filters, asOf: wallClock(o.asOf, timeZone), start: wallClock(o.start, timeZone), end: wallClock(o.end, timeZone) } as EngineReadOptions;
}

/** The read options the engine understands, as JSON (signal and callbacks left out). */
export function readOptionsJson(o: ReadOptions = {}): string {
  const out: Record<string, unknown> = {};
  for (const k of READ_KEYS) if (o[k] !== undefined) out[k] = o[k];
  return JSON.stringify(out, (_, v) => (typeof v === 'bigint' ? v.toString() : v));
}

/** The engine's rejections as `HudiError`s. */
async function engine<T>(work: Promise<T>, signal?: AbortSignal): Promise<T> {
  try {
    return await work;
  } catch (e) {
    throw toHudiError(e, signal);
  }
}

type Reopen = (e: Engine, signal?: AbortSignal) => Promise<WasmTable>;
/** A handle, the module it lives in, and how to open the same table in another module. */
type Opened = [WasmTable, Engine, Reopen];

/** Opens a table in `e` with `open` (`first`: this open, not a later one in another module,
 *  which reports no progress and creates nothing). */
async function openIn(e: Engine, open: (e: Engine, first: boolean, signal?: AbortSignal) => Promise<WasmTable>, signal?: AbortSignal): Promise<Opened> {
  const wasm = await engine(open(e, true, signal), signal);
  return [wasm, e, (other, s) => engine(open(other, false, s), s)];
}

const MAX_OBJECTS_BYTES = 'hudi-edge.write.max.objects.bytes';
/** 6 MiB: converting objects holds about 6 times their Arrow size in JS (the column
 *  values, apache-arrow's table, the IPC bytes and their pieces); with the engine's own
 *  memory a write of them stays within 64 MB + 3 times its input
 *  (tests/bench/results/write_memory_wasm.md). */
const DEFAULT_MAX_OBJECTS_BYTES = 6 << 20;

function maxObjectsBytes(options?: Record<string, string>): number {
  const v = options?.[MAX_OBJECTS_BYTES];
  if (v === undefined) return DEFAULT_MAX_OBJECTS_BYTES;
  const n = /^\s*\d+\s*$/.test(v) ? Number(v) : NaN;
  if (!(n >= 1) || !Number.isSafeInteger(n)) throw new InvalidArgumentError(`invalid argument: ${MAX_OBJECTS_BYTES}=${JSON.stringify(v)}: expected a whole number of bytes, at least 1`);
  return n;
}

/** Rows as Arrow IPC bytes: objects as columns of their JS types (the engine takes them in
 *  the table's types where no value changes). */
function rowsAsIpc(rows: WriteRows, options?: Record<string, string>): Uint8Array {
  if (rows instanceof Uint8Array) return rows;
  if (Array.isArray(rows)) {
    if (rows.length === 0) throw new InvalidInputError('invalid input: no rows to write');
    const maxBytes = maxObjectsBytes(options);
    let table: ArrowTable | null;
    try {
      table = rowsToArrow(rows, maxBytes, MAX_OBJECTS_BYTES) ?? tableFromJSON(rows);
    } catch (e) {
      if (e instanceof InvalidInputError) throw e;
      throw new InvalidInputError(`invalid input: rows do not convert to Arrow: ${(e as Error)?.message ?? e}`, undefined, { cause: e });
    }
    const ipc = tableToIPC(table, 'stream');
    // Nested values went through tableFromJSON, which is not counted as it goes.
    if (ipc.byteLength > maxBytes) throw objectsTooLarge(rows.length, maxBytes, MAX_OBJECTS_BYTES);
    return ipc;
  }
  const table = arrowTableOf(rows);
  if (table) return tableToIPC(table, 'stream');
  throw new InvalidArgumentError('write() takes an apache-arrow Table or RecordBatch, Arrow IPC bytes or an array of objects');
}

type EngineCounts = { inserts: number; updates: number; deletes: number };
/** The engine's commit detail with the counts spelled as the commit results spell them. */
function commitDetail(d: Omit<CommitDetail, 'inserted' | 'updated' | 'deleted' | 'files'> & EngineCounts & { files: (Omit<CommitDetail['files'][number], 'inserted' | 'updated' | 'deleted'> & EngineCounts)[] }): CommitDetail {
  const counts = <T extends EngineCounts>({ inserts, updates, deletes, ...rest }: T) => ({ ...rest, inserted: inserts, updated: updates, deleted: deletes });
  return { ...counts(d), files: d.files.map(counts) };
}

/** Where a table's listing manifest lives, relative to its base path. */
export const MANIFEST_PATH = '.hoodie/hudi-edge-manifest.json';

/**
 * Writes the listing manifest of the table at `where` (a URL, a local path in Node, or a
 * storage object) from its storage's own listing: S3, a local directory, a storage object with
 * `list`, or an nginx JSON index (`listing: 'autoindex'`). See `HudiTable.manifest`.
 */
export async function writeManifest(where: string | URL | StorageObject, options: OpenOptions & ManifestOptions = {}): Promise<ManifestResult> {
  const t = typeof where === 'object' && !(where instanceof URL) ? await HudiTable.openStorage(where, options) : await HudiTable.open(where, options);
  try {
    return await t.manifest(options);
  } finally {
    t.close();
  }
}

/**
 * Every Hudi table under `where` (`s3://bucket/prefix`, an http(s) store that lists, a local
 * folder in Node, or a storage object whose root is the folder searched), each with its
 * findings. Listing is breadth first and bounded; nothing inside a table is searched. When a
 * limit (`maxDepth`, `maxListings`, `maxObjects`) stops the search, `truncated` is true and
 * `limits` says which.
 */
export async function discover(where: string | URL | StorageObject, options: DiscoverOptions = {}): Promise<Discovery> {
  const { discoverJs, discoverTables } = await readEngine();
  const o = options;
  const search = { maxDepth: o.maxDepth, maxListings: o.maxListings, maxObjects: o.maxObjects, health: o.health, options: o.options };
  if (typeof where === 'object' && !(where instanceof URL)) {
    return engine(discoverJs(engineStorage(where), search, o.signal), o.signal);
  }
  if (isLocal(where)) return engine(discoverJs(engineStorage(localTableStorage(where)), search, o.signal), o.signal);
  const u = parseUrl(where);
  if (!['http:', 'https:', 's3:'].includes(u.protocol)) {
    throw new InvalidArgumentError(`unsupported URL scheme ${u.protocol} (expected http(s)://… or s3://bucket/prefix)`);
  }
  return engine(discoverTables(u.toString(), o, search, o.fetch, o.presign, o.signal), o.signal);
}

const WRITE_ACTIONS = new Set(['commit', 'deltacommit', 'replacecommit']);

/** Whether the write configs make failed writes someone else's to clean (Hudi's LAZY policy,
 *  explicit or through a multi-writer concurrency mode), as the engine reads them. */
function lazyCleaning(options: Record<string, string> = {}): boolean {
  const v = (k: string) => options[k]?.trim().toUpperCase();
  return v('hoodie.cleaner.policy.failed.writes') === 'LAZY' || (v('hoodie.write.concurrency.mode') ?? 'SINGLE_WRITER') !== 'SINGLE_WRITER';
}

const isMetaColumn = (name: string) => name.startsWith('_hoodie_');

/** Why `value` cannot be a value of Arrow type `type` (as `rows()` gives them: int64 as
 *  bigint or a safe integer, decimals as strings, dates and timestamps as strings), or null. */
function mismatch(type: string, value: unknown): string | null {
  const t = typeof value;
  if (t === 'symbol' || t === 'function') return `a ${t} is not a value`;
  if (/^(Large)?Utf8/.test(type)) return t === 'string' ? null : `expected a string, got ${t === 'object' ? 'an object' : `a ${t}`}`;
  if (type === 'Boolean') return t === 'boolean' ? null : `expected a boolean, got a ${t}`;
  if (/^U?Int(8|16|32|64)$/.test(type)) {
    if (t === 'bigint' || (t === 'number' && Number.isInteger(value))) return null;
    if (t === 'string' && /^-?\d+$/.test(value as string)) return null;
    return `expected an integer, got ${t === 'number' ? value : `a ${t}`}`;
  }
  if (/^Float(16|32|64)$/.test(type)) return t === 'number' || t === 'bigint' ? null : `expected a number, got a ${t}`;
  if (/^Decimal/.test(type)) {
    if (t === 'number' || t === 'bigint' || (t === 'string' && /^[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?$/.test(value as string))) return null;
    return `expected a decimal (a string such as "12.30"), got ${t === 'string' ? JSON.stringify(value) : `a ${t}`}`;
  }
  if (/^(Date|Timestamp)/.test(type)) {
    if (t === 'number' || t === 'bigint' || value instanceof Date) return null;
    if (t === 'string' && !Number.isNaN(Date.parse(value as string))) return null;
    return `expected ${type.startsWith('Date') ? 'a date (YYYY-MM-DD)' : 'a timestamp (ISO-8601)'}, got ${t === 'string' ? JSON.stringify(value) : `a ${t}`}`;
  }
  return null;
}

/** Object rows checked against the table's schema before any request: the first row and
 *  column that cannot fit. Deletes need only the key fields, so nothing is required there. */
function checkRows(rows: unknown[], schema: SchemaField[], operation: WriteOperation, addColumns = false): void {
  if (schema.length === 0) return;
  const fields = new Map(schema.map((f) => [f.name, f]));
  rows.forEach((row, i) => {
    if (row === null || typeof row !== 'object' || Array.isArray(row)) {
      throw new InvalidInputError(`invalid input: row ${i} is not an object`, undefined, { row: i });
    }
    for (const [column, value] of Object.entries(row)) {
      if (isMetaColumn(column) || value === undefined) continue;
      const field = fields.get(column);
      if (!field) {
        const hint = addColumns ? ' (plain objects cannot add columns: pass an apache-arrow Table whose schema types them)' : '';
        throw new InvalidInputError(`invalid input: row ${i}, column ${JSON.stringify(column)}: the table has no such column${hint}`, undefined, { row: i, column });
      }
      if (value === null) continue;
      const why = mismatch(field.type, value);
      if (why) throw new InvalidInputError(`invalid input: row ${i}, column ${JSON.stringify(column)}: ${why}`, undefined, { row: i, column });
    }
    if (operation === 'delete') return;
    for (const f of schema) {
      const value = (row as Record<string, unknown>)[f.name];
      if (!f.nullable && !isMetaColumn(f.name) && (value === undefined || value === null)) {
        throw new InvalidInputError(`invalid input: row ${i}, column ${JSON.stringify(f.name)}: missing and not nullable`, undefined, { row: i, column: f.name });
      }
    }
  });
}

/** The engine's INVALID_INPUT with the row filled in from the caller's objects when the
 *  engine named only the column (a missing key field, say). */
function locateInput(e: InvalidInputError, rows: WriteRows): InvalidInputError {
  if (e.row !== undefined || e.column === undefined || !Array.isArray(rows)) return e;
  const column = e.column;
  const missing = /missing|has no column|no column/.test(e.message);
  const row = (rows as Row[]).findIndex((r) => (missing ? r?.[column] == null : r?.[column] != null));
  if (row < 0) return e;
  return new InvalidInputError(`${e.message} (row ${row} of the input)`, e.object, { cause: e.cause, row, column });
}

type Io = ReturnType<WasmTable['io']>;
/** What was spent between two snapshots of the handle's counters (the whole of `now` when the
 *  handle was reopened in between and its counters started again). */
function ioSince(start: Io, now: Io): Io {
  if (now.requests < start.requests) return now;
  const counters = Object.entries(now).map(([k, v]) => [k, typeof v === 'number' ? v - ((start as unknown as Record<string, number>)[k] ?? 0) : v]);
  return { ...(Object.fromEntries(counters) as Io), byPurpose: undefined, warnings: now.warnings.slice(start.warnings.length) };
}


/** Progress of a job on `w` as its requests go out: `report(phase)` calls `onProgress` with
 *  the requests since the start (a throwing callback is ignored); `polling(phase)` reports
 *  every 50 ms while the request count changes, until `stop()`. */
function progressOf<P extends string>(
  w: WasmTable,
  onProgress: ((p: { phase: P; requests: number; bytes: number; puts: number }) => void) | undefined,
) {
  const start = w.io();
  const report = (phase: P) => {
    if (!onProgress) return;
    const d = ioSince(start, w.io());
    try {
      onProgress({ phase, requests: d.requests, bytes: d.bytes, puts: d.puts });
    } catch {
      // A throwing callback must not break the job.
    }
  };
  let timer: ReturnType<typeof setInterval> | undefined;
  const polling = (phase: P) => {
    if (!onProgress) return;
    let seen = -1;
    timer = setInterval(() => {
      const n = w.io().requests;
      if (n !== seen) (seen = n), report(phase);
    }, 50);
  };
  return { start, report, polling, stop: () => timer && clearInterval(timer) };
}

/** `https://user:pw@host/a/b/?token=x` → `https://host/a/b` (for messages: no secrets). */
function publicLocation(url: URL): string {
  return `${url.protocol}//${url.host}${url.pathname.replace(/\/+$/, '')}`;
}

function parseUrl(url: string | URL): URL {
  try {
    return new URL(url);
  } catch {
    throw new InvalidArgumentError(`not a table URL: ${String(url).replace(/\?.*/, '')} (expected http(s)://… or s3://bucket/prefix)`);
  }
}

/** The storage over a local path or `file://` URL (Node only). */
function localTableStorage(where: string | URL): StorageObject {
  const storage = localStorageFor(where);
  if (!storage) {
    throw new InvalidArgumentError(`not a table URL: ${String(where).replace(/\?.*/, '')} (expected http(s)://… or s3://bucket/prefix; local paths and file:// URLs open in Node, and here the files open with openFiles)`);
  }
  return storage;
}

/** A new table's spec as the engine takes it: the columns as Spark SQL or as the Arrow IPC of
 *  an empty table, field lists as arrays. */
function engineTableSpec(t: NewTableSpec): EngineTableSpec & { schemaIpc?: Uint8Array } {
  const list = (v: string | string[] | undefined, what: string): string[] => {
    if (v === undefined) return [];
    if (typeof v === 'string') return [v];
    if (Array.isArray(v) && v.every((x) => typeof x === 'string')) return v;
    throw new InvalidArgumentError(`invalid argument: ${what} is a field name or an array of them`);
  };
  if (!t || typeof t !== 'object') throw new InvalidArgumentError('invalid argument: create() needs a table spec');
  // A misspelt key would otherwise be dropped silently (a table without its ordering field).
  const known = ['name', 'type', 'columns', 'recordKey', 'partitionBy', 'orderingFields', 'options'];
  const unknown = Object.keys(t).filter((k) => !known.includes(k));
  if (unknown.length > 0) {
    throw new InvalidArgumentError(`invalid argument: unknown table spec field ${unknown.map((k) => JSON.stringify(k)).join(', ')} (known: ${known.join(', ')})`);
  }
  const { columns, recordKey, partitionBy, orderingFields, ...rest } = t;
  const common = {
    ...rest,
    recordKey: list(recordKey, 'recordKey'),
    partitionBy: list(partitionBy, 'partitionBy'),
    orderingFields: list(orderingFields, 'orderingFields'),
  };
  if (typeof columns === 'string') return { ...common, columns };
  const schema = arrowSchemaOf(columns);
  if (!schema) {
    throw new InvalidArgumentError('invalid argument: columns is a Spark SQL column list or an apache-arrow Schema, Table or RecordBatch');
  }
  return { ...common, schemaIpc: tableToIPC(new ArrowTable(schema), 'stream') };
}

/** A Hudi table, open. Release its wasm memory with `close()` when done (or let GC do it). */
export class HudiTable {
  /** Where the table is (credentials and query strings removed). */
  readonly location: string;
  #wasm: WasmTable | null;
  /** Whether `#wasm` lives in the full module. */
  #full: boolean;
  /** Opens this table again in another module (the full one, for the first write). */
  readonly #reopen: Reopen;
  #switching: Promise<void> | undefined;
  /** Handles left in the read module, freed once no call is in flight. */
  #retired: WasmTable[] = [];
  #inFlight = 0;
  #closing = false;
  #layout: Promise<FileLayout> | undefined;
  #history: Promise<unknown> | undefined;
  /** Details of completed instants (they do not change). */
  readonly #commits = new Map<string, CommitDetail>();
  /** The zone of the timeline's clock: UTC, or the one given for a `LOCAL` timeline. */
  readonly #timeZone: string;

  private constructor(opened: Opened, location: string, timeZone: string | undefined) {
    const [wasm, engine, reopen] = opened;
    this.#wasm = wasm;
    this.#full = engine.full;
    this.#reopen = reopen;
    this.location = location;
    this.#timeZone = wasm.timelineUtc ? 'UTC' : (timeZone ?? 'UTC');
  }

  /**
   * Opens the table at `url`: `http(s)://host/path/to/table`, `s3://bucket/prefix` or, in
   * Node, a local path (absolute or relative to the working directory) or `file://` URL
   * (`fsStorage` from `hudi-edge/fs`: read and write). Reads `hoodie.properties` and lists the
   * active timeline (one round trip).
   */
  static async open(url: string | URL, options: OpenOptions = {}): Promise<HudiTable> {
    if (options.timeZone !== undefined) clock(options.timeZone);
    if (isLocal(url)) return HudiTable.openStorage(localTableStorage(url), options);
    const u = parseUrl(url);
    if (!['http:', 'https:', 's3:'].includes(u.protocol)) {
      throw new InvalidArgumentError(`unsupported URL scheme ${u.protocol} (expected http(s)://… or s3://bucket/prefix)`);
    }
    const o = options;
    // A cold open sends its first round while the module compiles.
    const primed = engineLoaded() ? undefined : primeUrlOpen(u, o);
    try {
      const opened = await openIn(await readEngine(), async (e, first, signal) => {
        const cache = o.cache === undefined ? undefined : await o.cache.share(e);
        return e.WasmTable.openUrl(u.toString(), o, primed?.fetch ?? o.fetch, o.presign, signal, first ? o.onProgress : undefined, cache, undefined);
      }, o.signal);
      return new HudiTable(opened, publicLocation(u), o.timeZone);
    } finally {
      primed?.done();
    }
  }

  /**
   * Opens a table over your own storage: an object with async `get(path, start?, end?)`,
   * `head(path)` and `list(prefix, recursive)` (paths relative to the base path; errors with
   * `code` `NOT_FOUND` / `ACCESS_DENIED` / `ABORTED` keep their meaning).
   */
  static async openStorage(storage: StorageObject, options: StorageOpenOptions = {}): Promise<HudiTable> {
    if (options.timeZone !== undefined) clock(options.timeZone);
    const o = options;
    // A cold open sends its first round while the module compiles.
    const primed = engineLoaded() ? undefined : primeOpen(storage, o.prefetchMetadataTable === true);
    try {
      const opened = await openIn(await readEngine(), async (e, first, signal) => {
        const cache = o.cache === undefined ? undefined : await o.cache.share(e);
        return e.WasmTable.openJs(engineStorage(primed?.storage ?? storage), signal, first ? o.onProgress : undefined, cache, o.prefetchMetadataTable, undefined);
      }, o.signal);
      return new HudiTable(opened, storage.location, o.timeZone);
    } finally {
      primed?.done();
    }
  }

  /**
   * Creates an empty table at `url` (`s3://bucket/prefix`, or a local path or `file://` URL in Node) and opens it: one conditional `PUT` of `.hoodie/hoodie.properties`
   * (`If-None-Match: *`), so of two creators one gets `ConflictError`, as does a location
   * that already holds a table. Write to it with `insert` / `upsert`; Apache Hudi (Spark,
   * Flink) and hudi-rs read and keep writing it.
   */
  static async create(url: string | URL, table: NewTableSpec, options: OpenOptions = {}): Promise<HudiTable> {
    if (isLocal(url)) return HudiTable.createStorage(localTableStorage(url), table, options);
    const u = parseUrl(url);
    if (u.protocol === 'http:' || u.protocol === 'https:') {
      throw new ReadOnlyError(`${publicLocation(u)}: plain HTTP(S) is read-only; create the table over s3://bucket/prefix or a storage object with put`, undefined);
    }
    if (u.protocol !== 's3:') {
      throw new InvalidArgumentError(`unsupported URL scheme ${u.protocol} (expected s3://bucket/prefix)`);
    }
    const spec = engineTableSpec(table);
    const o = options;
    const opened = await openIn(await fullEngine(), (e, first, signal) => e.WasmTable.openUrl(u.toString(), o, o.fetch, o.presign, signal, first ? o.onProgress : undefined, undefined, first ? spec : undefined), o.signal);
    return new HudiTable(opened, publicLocation(u), o.timeZone);
  }

  /** `create` over your own storage (`openStorage`'s object, with `put`). */
  static async createStorage(storage: StorageObject, table: NewTableSpec, options: Cancellable = {}): Promise<HudiTable> {
    const spec = engineTableSpec(table);
    const opened = await openIn(await fullEngine(), (e, first, signal) => e.WasmTable.openJs(engineStorage(storage), signal, undefined, undefined, false, first ? spec : undefined), options.signal);
    return new HudiTable(opened, storage.location, undefined);
  }

  /** Opens a table from local files (a picked folder, dropped files), read lazily. Paths are
   *  relative to the base path; `File`s with a `webkitRelativePath` lose its first segment
   *  (the folder picked). */
  static async openFiles(files: Iterable<LocalFile | File> | ArrayLike<File>, options: Cancellable = {}): Promise<HudiTable> {
    const list: (LocalFile | File)[] = Array.from(files as Iterable<LocalFile | File>);
    const relative = (f: File) => (f as File & { webkitRelativePath?: string }).webkitRelativePath || f.name;
    const entries: LocalFile[] = list.map((f) =>
      'path' in f && 'data' in f ? f : { path: relative(f as File), data: f as File, lastModified: (f as File).lastModified },
    );
    const tops = new Set(entries.map((e) => e.path.split('/')[0]));
    const strip = tops.size === 1 && entries.every((e) => e.path.includes('/')) && !entries.some((e) => e.path.startsWith('.hoodie/'));
    const files2 = strip ? entries.map((e) => ({ ...e, path: e.path.slice(e.path.indexOf('/') + 1) })) : entries;
    return HudiTable.openStorage(new BlobStorage(files2, strip ? `local://${[...tops][0]}/` : 'local://'), options);
  }

  /** Opens a table from the bytes of a `.zip` of it (one top folder = the table). In memory. */
  static async openZip(zip: Uint8Array | ArrayBuffer | Blob, name = 'table.zip', options: { timeZone?: string } = {}): Promise<HudiTable> {
    if (options.timeZone !== undefined) clock(options.timeZone);
    const bytes = zip instanceof Uint8Array ? zip : new Uint8Array(zip instanceof Blob ? await zip.arrayBuffer() : zip);
    const opened = await openIn(await readEngine(), (e) => e.WasmTable.openZip(bytes, name));
    return new HudiTable(opened, `zip://${name}`, options.timeZone);
  }

  /** Whether the storage takes writes (and so table services and `fix()`): false for plain
   *  HTTP(S), a zip, or local files given as Blobs. */
  get writable(): boolean {
    return this.#alive().writable;
  }

  /** Writes, cleans and table services on a storage that cannot write: one code, before any
   *  request, whichever call asked. */
  #writable(w: WasmTable, what: string): void {
    if (!w.writable) {
      throw new ReadOnlyError(`${this.location} is open read-only (plain HTTP(S), a zip or local files given as Blobs): open it over S3, a local path in Node or a storage with put and delete to ${what}`, undefined);
    }
  }

  #alive(): WasmTable {
    if (!this.#wasm || this.#closing) throw new InvalidArgumentError('the table is closed');
    return this.#wasm;
  }

  /** Moves the table to the full module (before its first write or table service):
   *  loads the module, opens the table there, and frees the read module's handle once no
   *  call is in flight. The new handle reads the timeline as it is now. */
  async #toFull(signal: AbortSignal | undefined): Promise<void> {
    if (this.#full) return;
    this.#alive();
    this.#switching ??= (async () => {
      const w = await this.#reopen(await fullEngine(), signal);
      if (!this.#wasm || this.#closing) {
        w.free();
        this.#alive();
      }
      this.#retired.push(this.#wasm!);
      this.#wasm = w;
      this.#full = true;
      this.#layout = undefined;
      this.#history = undefined;
      if (this.#inFlight === 0) this.#freeRetired();
    })().finally(() => (this.#switching = undefined));
    await engine(this.#switching, signal);
  }

  /** `#run` in the full module; `writes` names what a read-only storage refuses, before the
   *  module is loaded. */
  async #runFull<T>(signal: AbortSignal | undefined, writes: string | undefined, f: (w: WasmTable) => Promise<T>): Promise<T> {
    if (writes !== undefined) this.#writable(this.#alive(), writes);
    await this.#toFull(signal);
    return this.#run(signal, f);
  }

  #freeRetired() {
    for (const w of this.#retired.splice(0)) w.free();
  }

  /** Runs one engine call: error classes (an abort of `signal` as its reason), and deferred
   *  `close()`. */
  async #run<T>(signal: AbortSignal | undefined, f: (w: WasmTable) => Promise<T>): Promise<T> {
    const w = this.#alive();
    this.#inFlight += 1;
    try {
      return await engine(f(w), signal);
    } finally {
      this.#inFlight -= 1;
      if (this.#inFlight === 0) this.#freeRetired();
      if (this.#closing && this.#inFlight === 0) this.#free();
    }
  }

  /** Type, version, keys, partitions, file groups, metadata-table partitions, properties. */
  async info(o?: Cancellable): Promise<TableInfo> {
    // The engine shares the latest layout between fileGroups() and info().
    await this.fileGroups(o);
    return this.#run(o?.signal, (w) => w.info(o?.signal));
  }

  /** The timeline: instants oldest first (archived ones first, when asked for). */
  timeline(o: TimelineOptions = {}): Promise<Instant[]> {
    return this.#run(o?.signal, async (w) => {
      const { instants } = await w.timeline(Boolean(o.archived), o.signal);
      if (o.archived) this.#history = Promise.resolve();
      if (o.operations !== false) {
        const writes = instants.filter((i) => i.state === 'completed' && WRITE_ACTIONS.has(i.action));
        const details = await Promise.all(writes.map((i) => this.#commit(w, i.requestedTime, o.signal).catch(() => null)));
        o.signal?.throwIfAborted();
        writes.forEach((i, n) => (i.operation = details[n]?.operation ?? null));
      }
      return instants;
    });
  }

  /** One instant's metadata: files written, record counts, bytes, replaced file groups, schema. */
  commit(requestedTime: string, o?: Cancellable): Promise<CommitDetail> {
    return this.#run(o?.signal, (w) => this.#commit(w, requestedTime, o?.signal));
  }

  async #commit(w: WasmTable, requestedTime: string, signal: AbortSignal | undefined): Promise<CommitDetail> {
    const cached = this.#commits.get(requestedTime);
    if (cached) return cached;
    // The engine's `instant()` loads the archived timeline first: do it once, not per instant.
    this.#history ??= w.timeline(true).catch((e) => {
      this.#history = undefined;
      throw e;
    });
    await this.#history;
    const detail = commitDetail(await w.instant(requestedTime, signal));
    if (detail.instant.state === 'completed') this.#commits.set(requestedTime, detail);
    return detail;
  }

  /** Partitions → file groups → file slices (base file, log files, sizes), latest or as of an instant. */
  fileGroups(o: { asOf?: string } & Cancellable = {}): Promise<FileLayout> {
    if (!o.asOf && this.#layout) return this.#layout;
    const layout = this.#run(o?.signal, (w) => w.fileGroups(o.asOf ? String(wallClock(o.asOf, this.#timeZone)) : null, o.signal));
    if (!o.asOf) {
      this.#layout = layout;
      layout.catch(() => (this.#layout = undefined));
    }
    return layout;
  }

  /** What a read would do: the file slices it reads, pruning stage by stage, and the I/O planning cost. */
  plan(o: ReadOptions = {}): Promise<Plan> {
    return this.#run(o?.signal, async (w) => {
      const t0 = performance.now();
      const plan = await w.plan(engineReadOptions(o, this.#timeZone), o.signal, o.onProgress);
      // `stats` copied: the public PlanStats is open (an index signature), the generated one is not.
      return { ...plan, stats: { ...plan.stats }, timeMs: performance.now() - t0 };
    });
  }

  /** The rows as an apache-arrow `Table`. */
  read(o: ReadOptions = {}): Promise<ArrowTable> {
    // Piece by piece: each batch leaves wasm memory as it is read, so the result is held once.
    return this.#run(o?.signal, async (w) => tableFromIPC(await w.readArrowPieces(engineReadOptions(o, this.#timeZone), o.signal, o.onProgress)));
  }

  /** The rows as plain objects (decimals as strings with their scale, timestamps ISO-8601,
   *  dates `YYYY-MM-DD`, binary base64), like the CLI's JSON. */
  rows(o: ReadOptions = {}): Promise<Row[]> {
    return this.#run(o?.signal, (w) => w.readJson(engineReadOptions(o, this.#timeZone), false, o.signal, o.onProgress));
  }

  /** The rows as apache-arrow `RecordBatch`es, one at a time. Break out of the loop (or abort)
   *  to stop early; the rest is not read. */
  async *stream(o: ReadOptions = {}): AsyncGenerator<RecordBatch, void, undefined> {
    const stream = await this.#run(o?.signal, async (w) => w.stream(engineReadOptions(o, this.#timeZone), o.signal, o.onProgress));
    try {
      for (;;) {
        const bytes = await this.#run(o.signal, () => stream.next());
        if (!bytes) return;
        for (const batch of RecordBatchReader.from(bytes)) yield batch;
      }
    } finally {
      stream.close();
      stream.free();
    }
  }

  /** Which commits of `(start, end]` changed which file groups, and where each change is read
   *  (CDC log files, a base file inserted or deleted whole, a log file merged with the slice
   *  before it, file groups a replace commit dropped). Tables need `hoodie.table.cdc.enabled`. */
  changePlan(o: ChangeOptions = {}): Promise<ChangePlan> {
    const [start, end] = this.#changeRange(o);
    return this.#run(o.signal, (w) => w.changePlan(start, end, o.signal));
  }

  /** The change feed of `(start, end]` as an apache-arrow `Table` of four strings — `op`,
   *  `ts_ms`, `before`, `after` — exactly as Apache Hudi's Spark CDC query
   *  (`hoodie.datasource.query.incremental.format=cdc`) returns them, and what it cost. */
  async changesArrow(o: ChangeOptions = {}): Promise<{ table: ArrowTable; stats: ChangeStats }> {
    const [start, end] = this.#changeRange(o);
    const [bytes, stats] = await this.#run(o.signal, (w) => w.changesArrow(start, end, o.signal, o.onProgress));
    return { table: tableFromIPC(bytes), stats };
  }

  /** The change feed of `(start, end]`, change by change, oldest commit first. It is read one
   *  file-group change at a time as the loop asks (a few read ahead): break out of the loop
   *  (or abort) to stop early; the rest is not read. */
  async *changes(o: ChangeOptions = {}): AsyncGenerator<Change, void, undefined> {
    const [start, end] = this.#changeRange(o);
    const stream = await this.#run(o.signal, async (w) => w.changeStream(start, end, o.signal, o.onProgress));
    const image = (v: unknown) => (v == null ? null : (JSON.parse(String(v)) as Record<string, unknown>));
    try {
      for (;;) {
        const bytes = await this.#run(o.signal, () => stream.next());
        if (!bytes) return;
        for (const row of tableFromIPC(bytes)) {
          // An abort between two changes ends the iteration as any aborted call ends: AbortedError.
          if (o.signal?.aborted) throw toHudiError(o.signal.reason, o.signal);
          const tsMs = String(row.ts_ms);
          yield { op: String(row.op) as Change['op'], tsMs, instant: tsMs, before: image(row.before), after: image(row.after) };
        }
      }
    } finally {
      stream.close();
      stream.free();
    }
  }

  #changeRange(o: ChangeOptions): [string | undefined, string | undefined] {
    const text = (v: unknown) => (v === undefined ? undefined : String(wallClock(v, this.#timeZone)));
    return [text(o.start), text(o.end)];
  }

  /**
   * Commits `rows` as one Hudi commit (`upsert`, `insert` or `delete`); afterwards this table
   * shows it. Needs a storage that can write: S3 (`open('s3://…', { s3 })`, or `presign` for
   * PUT and DELETE too) or a storage object with `put` and `delete`; tables opened over plain
   * HTTP(S), from files or a zip are refused (`UnsupportedError`) before any request. Rows that
   * do not fit the table are an `InvalidInputError`; a concurrent commit is a `ConflictError`.
   */
  write(rows: WriteRows, o: WriteOptions): Promise<WriteResult> {
    return this.#runFull(o?.signal, 'write', async (w) => {
      this.#writable(w, 'write');
      const bytes = rowsAsIpc(rows, o.options);
      const result = await w.write(bytes, { operation: o.operation, options: o.options, commitRetries: o.commitRetries, addColumns: o.addColumns, deferServices: o.deferServices }, o.signal);
      // The engine reopened the table; what was cached here describes the one before.
      this.#layout = undefined;
      this.#history = undefined;
      return result;
    });
  }

  /** Updates rows whose key the table holds and inserts the rest, as one commit. Rows: plain
   *  objects with `rows()`'s value conventions (int64 as bigint, decimals as strings, dates
   *  `YYYY-MM-DD`, timestamps ISO-8601), an apache-arrow `Table` or `RecordBatch` (any copy of
   *  apache-arrow) or Arrow IPC bytes. */
  upsert(rows: WriteRows, o: WriteJobOptions = {}): Promise<CommitResult> {
    return this.#writeJob('upsert', rows, o);
  }

  /** Inserts rows as one commit (a key the table already holds is updated, never duplicated). */
  insert(rows: WriteRows, o: WriteJobOptions = {}): Promise<CommitResult> {
    return this.#writeJob('insert', rows, o);
  }

  /** Deletes the rows with these keys as one commit (a key the table does not hold is counted
   *  in `deleteMissing`, not an error). */
  delete(keys: DeleteKeys, o: WriteJobOptions = {}): Promise<CommitResult> {
    return this.#writeJob('delete', keys, o);
  }

  #writeJob(operation: WriteOperation, rows: WriteRows, o: WriteJobOptions): Promise<CommitResult> {
    return this.#runFull(o?.signal, 'write', async (w) => {
      this.#writable(w, 'write');
      o.signal?.throwIfAborted();
      const progress = progressOf<WriteProgress['phase']>(w, o.onProgress);
      const { start, report } = progress;
      report('checking');
      if (Array.isArray(rows)) checkRows(rows, await w.schema(o.signal), operation, o.addColumns);
      const bytes = rowsAsIpc(rows, o.options);
      const before = new Set((await w.timeline(false)).instants.map((i) => i.requestedTime));
      progress.polling('writing');
      const wireOptions = { operation, options: o.options, commitRetries: o.commitRetries, addColumns: o.addColumns, deferServices: o.deferServices };
      try {
        const r = await w.write(bytes, wireOptions, o.signal);
        this.#layout = undefined;
        this.#history = undefined;
        report('committed');
        return {
          instant: r.instant,
          completionTime: r.completionTime,
          action: r.action,
          operation: r.operation,
          inserted: r.records.inserted,
          updated: r.records.updated,
          deleted: r.records.deleted,
          filesWritten: r.filesWritten,
          io: r.io,
          deleteMissing: r.records.deleteMissing,
          deduplicated: r.records.deduplicated,
          metadataPartitions: r.metadataTable.partitions,
          metadataTableCompaction: r.metadataTable.compaction,
          attempts: r.attempts,
          rolledBack: r.rolledBack,
          cleans: r.clean,
          archival: r.archival,
          compaction: r.compaction,
          clustering: r.clustering,
          serviceErrors: r.serviceErrors,
        };
      } catch (e) {
        const err = toHudiError(e);
        if (err instanceof InvalidInputError) throw locateInput(err, rows);
        if (!(err instanceof AbortedError)) throw err;
        return await this.#afterAbort(w, operation, before, o, err, start, report);
      } finally {
        progress.stop();
      }
    });
  }

  /** An aborted write: the table as it is now says whether it passed its commit point. If its
   *  commit completed, that is the answer; else its pending instants are rolled back (on a
   *  single-writer table) and the abort stands. */
  async #afterAbort(
    w: WasmTable,
    operation: WriteOperation,
    before: Set<string>,
    o: WriteJobOptions,
    aborted: AbortedError,
    start: Io,
    report: (phase: WriteProgress['phase']) => void,
  ): Promise<CommitResult> {
    this.#layout = undefined;
    this.#history = undefined;
    try {
      await w.reload();
    } catch (e) {
      aborted.message += ` (the table could not be read again to check the write: ${toHudiError(e).message})`;
      throw aborted;
    }
    const fresh = (await w.timeline(false)).instants.filter((i) => !before.has(i.requestedTime));
    const landed = fresh.filter((i) => i.state === 'completed' && (i.action === 'commit' || i.action === 'deltacommit') && i.requestedAction === i.action).pop();
    // Ours when it carries our operation (the handle's timeline was the latest one it held:
    // another writer's commit since then would show here too).
    const detail = landed && (await this.#commit(w, landed.requestedTime, undefined));
    if (landed && detail && detail.operation?.toLowerCase() === operation) {
      const d = detail;
      report('committed');
      return {
        instant: landed.requestedTime,
        completionTime: landed.completionTime ?? '',
        action: landed.action,
        operation,
        inserted: d.inserted,
        updated: d.updated,
        deleted: d.deleted,
        filesWritten: d.files.map((f) => f.path),
        io: ioSince(start, w.io()),
        metadataPartitions: [],
        abortedAfterCommit: true,
      };
    }
    const pending = fresh.filter((i) => i.state !== 'completed' && ['commit', 'deltacommit', 'rollback'].includes(i.requestedAction)).map((i) => i.requestedTime);
    if (pending.length === 0) throw aborted;
    if (lazyCleaning(o.options)) {
      aborted.pending = pending;
      throw aborted;
    }
    report('rolling-back');
    try {
      const done = await w.rollbackPending(pending);
      aborted.rolledBack = [...new Set(done.map((r) => r.instant))];
    } catch (e) {
      aborted.pending = pending;
      aborted.message += ` (rolling back its instant failed, the next write will: ${toHudiError(e).message})`;
    }
    this.#layout = undefined;
    this.#history = undefined;
    throw aborted;
  }

  /** Builds the metadata-table partitions the table lacks: those named (`files`,
   *  `column_stats`, `partition_stats`, `record_index`; none: Spark's defaults) and those
   *  `options` ask for (`hoodie.metadata.*`, lock configs), as Hudi's metadata writer
   *  initialises them. `null` when none was missing. Later calls see the new partitions. */
  index(o: IndexOptions = {}): Promise<IndexResult | null> {
    return this.#runFull(undefined, 'index', async (w) => {
      this.#writable(w, 'index');
      const built = await w.index(o.partitions ?? [], o.options ?? {});
      this.#layout = undefined;
      this.#history = undefined;
      return built;
    });
  }

  /** Compacts a Merge-On-Read table as Hudi's compactor does: executes pending plans (or
   *  `instant` alone), then schedules a plan over every file slice with log files and,
   *  unless `scheduleOnly`, executes it (writes do it themselves when due; this runs it on
   *  request). Later calls see the new base files. */
  compact(o: CompactOptions = {}): Promise<CompactReport> {
    return this.#runFull(o?.signal, 'compact', async (w) => {
      this.#writable(w, 'compact');
      const done = await w.compact(o.options ?? {}, Boolean(o.scheduleOnly), o.instant, o.signal);
      this.#layout = undefined;
      this.#history = undefined;
      return done;
    });
  }

  /** Clusters the table as Hudi's `run_clustering` does: schedules a plan over the small
   *  file slices, then executes it and every pending plan (or `instant` alone; with
   *  `scheduleOnly` the plan is written and left). Later calls see the new file groups. */
  cluster(o: ClusterOptions = {}): Promise<ClusterReport> {
    return this.#runFull(o?.signal, 'cluster', async (w) => {
      this.#writable(w, 'cluster');
      const done = await w.cluster(o.options ?? {}, Boolean(o.scheduleOnly), o.instant, o.signal);
      this.#layout = undefined;
      this.#history = undefined;
      return done;
    });
  }

  /** Moves old instants of the timeline and of the metadata table's timeline to their LSM
   *  histories where due, as Hudi's archiver does after each commit (writes do it
   *  themselves; this runs it on request). */
  archive(o: ArchiveOptions = {}): Promise<ArchiveResult> {
    return this.#runFull(o?.signal, 'archive', async (w) => {
      this.#writable(w, 'archive');
      const done = await w.archive(o.options ?? {}, o.signal);
      this.#layout = undefined;
      this.#history = undefined;
      return done;
    });
  }

  /** Cleans the table as Apache Hudi 1.1's cleaner does (`options`: `hoodie.clean.*`, lock
   *  configs): finishes a pending clean or plans one when due, deletes the old file slices
   *  it names and commits it; then the metadata table's own clean when due. Empty when
   *  nothing was due. Later calls see the clean. */
  clean(o: CleanOptions = {}): Promise<CleanResult[]> {
    return this.#runFull(o?.signal, 'clean', async (w) => {
      this.#writable(w, 'clean');
      o.signal?.throwIfAborted();
      const progress = progressOf<CleanProgress['phase']>(w, o.onProgress);
      progress.polling('cleaning');
      try {
        const done = await w.clean(o.options ?? {}, o.signal);
        this.#layout = undefined;
        this.#history = undefined;
        progress.report('cleaned');
        return done;
      } finally {
        progress.stop();
      }
    });
  }

  /** The table's health from its timeline, listings and instant files (no data block
   *  read): file sizes, the Merge-On-Read log backlog, pending and failed writes, cleaning
   *  and archival lag, the storage lock, the metadata table, write activity, and findings
   *  naming the service or setting that fixes each. */
  health(o: HealthOptions = {}): Promise<Health> {
    return this.#run(o.signal, (w) => w.health(o.options ?? {}, o.signal));
  }

  /** Runs the table service that fixes each finding naming one (rollback of failed
   *  writes, the stale lock taken and released, compaction, clustering, cleaning,
   *  archival, the metadata table's missing partitions), then reports again. A read-only
   *  store is refused. Later calls see the table as the services left it. */
  fix(o: HealthOptions = {}): Promise<FixReport> {
    return this.#runFull(o.signal, 'fix its findings', async (w) => {
      this.#writable(w, 'fix its findings');
      const done = await w.fix(o.options ?? {}, o.signal);
      this.#layout = undefined;
      this.#history = undefined;
      return done;
    });
  }

  /** The listing manifest of the table as its storage lists it now (every file with its size:
   *  what hosts without a list API serve in place of a listing), stored at
   *  `.hoodie/hudi-edge-manifest.json` when the storage can write and `write` is not `false`.
   *  Rewrite it after each commit and clean. */
  manifest(o: ManifestOptions = {}): Promise<ManifestResult> {
    return this.#run(o.signal, async (w) => {
      const write = o.write !== false;
      if (write) this.#writable(w, 'write its manifest (or pass write: false and upload the JSON yourself)');
      const json = await w.manifest(new Date().toISOString().replace(/\.\d{3}Z$/, 'Z'), write, o.signal);
      const m = JSON.parse(new TextDecoder().decode(json)) as { dirs: Record<string, unknown[]>; latestInstant?: string | null };
      const files = Object.values(m.dirs).reduce((n, d) => n + d.length, 0);
      return { path: MANIFEST_PATH, written: write, files, latestInstant: m.latestInstant ?? null, json };
    });
  }

  /** The table services a write made with `deferServices` left — a metadata-table
   *  compaction that came due, then cleaning, archival, inline compaction and clustering as
   *  `options` configure them, each only when due — run on the table as it is now. Later
   *  calls see what they did. */
  runServices(o: RunServicesOptions = {}): Promise<ServicesResult> {
    return this.#runFull(o?.signal, 'run table services', async (w) => {
      const r = await w.runServices(o.options ?? {}, o.signal);
      this.#layout = undefined;
      this.#history = undefined;
      return { cleans: r.clean, archival: r.archival, compaction: r.compaction, clustering: r.clustering, metadataTableCompaction: r.metadataTableCompaction ?? null, rolledBack: r.rolledBack, serviceErrors: r.serviceErrors, io: r.io };
    });
  }

  /** Reads the timeline again: later calls see commits made since the table was opened.
   *  With `forWrite`, also what a write reads before its first request of its own (the
   *  latest schema, the metadata table's partition listings, the full module), so a write
   *  that follows starts at once: a process or isolate that keeps its handle between writes
   *  refreshes it after each one, off the path of the next. */
  async refresh(o: RefreshOptions = {}): Promise<void> {
    if (o.forWrite) {
      this.#writable(this.#alive(), 'write');
      // Moving to the full module opens the table there afresh: no reload after it.
      const moved = !this.#full;
      await this.#toFull(o.signal);
      await this.#run(o.signal, async (w) => {
        if (!moved) await w.reload(o.signal);
        await w.schema(o.signal);
      });
    } else {
      await this.#run(o?.signal, (w) => w.reload(o.signal));
    }
    this.#layout = undefined;
    this.#history = undefined;
  }

  /** The storage lock and the writers' heartbeats, when the table has them (multi-writer
   *  setups with Hudi's storage-based lock provider and lazy failed-write cleaning). */
  writers(o: Cancellable = {}): Promise<WriterState> {
    return this.#run(o?.signal, async (w) => {
      const path = '.hoodie/.locks/table_lock.json';
      const [lockBytes, beats] = await Promise.all([
        w.readObject(path, o.signal).catch((e) => {
          if (toHudiError(e) instanceof NotFoundError) return null;
          throw e;
        }),
        w.listObjects('.hoodie/.heartbeat', o.signal),
      ]);
      let lock: WriterState['lock'] = null;
      if (lockBytes) {
        let raw: Record<string, unknown>;
        try {
          raw = JSON.parse(new TextDecoder().decode(lockBytes));
        } catch (e) {
          throw new CorruptError(`${path} is corrupt: not JSON (${(e as Error).message})`, path);
        }
        const validUntil = typeof raw.validUntil === 'number' ? raw.validUntil : Number(raw.validUntil) || null;
        const owner = raw.owner ?? raw.holder ?? null;
        lock = { owner: owner === null ? null : String(owner), validUntil, expired: raw.expired === true || (validUntil !== null && validUntil < Date.now()), raw };
      }
      const heartbeats = beats
        .map((b) => ({ instant: b.path.split('/').at(-1) ?? '', lastBeat: b.lastModified ?? null }))
        .filter((b) => /^\d{14,17}$/.test(b.instant));
      return { lock, heartbeats };
    });
  }

  /** The files instant `requestedTime` wrote into the metadata table (its delta commit of the
   *  same time), by metadata-table partition. */
  metadataTableFiles(requestedTime: string, o: Cancellable = {}): Promise<MetadataTableFile[]> {
    return this.#run(o?.signal, async (w) => {
      const listed = await w.listObjects('.hoodie/metadata', o.signal);
      const mark = `_${requestedTime}.`;
      return listed
        .filter((f) => !f.path.startsWith('.hoodie/metadata/.hoodie/') && f.path.split('/').at(-1)!.includes(mark))
        .map((f) => ({ partition: f.path.split('/').slice(2, -1).join('/'), path: f.path, size: f.size }));
    });
  }

  /** Requests and bytes since the table was opened. */
  io(): IoStats {
    return this.#alive().io();
  }

  /** Releases the table's wasm memory (after the calls in flight finish). */
  close(): void {
    if (!this.#wasm || this.#closing) return;
    this.#closing = true;
    if (this.#inFlight === 0) this.#free();
  }

  [Symbol.dispose](): void {
    this.close();
  }

  #free() {
    this.#freeRetired();
    this.#wasm?.free();
    this.#wasm = null;
  }
}
