// `HudiTable`: the package's one entry point. It opens a table (by URL, from local files, from a
// zip, or over any storage object), and answers with typed objects and apache-arrow tables.
// The engine does the work in wasm; this layer converts shapes, errors, progress and aborts.

import { RecordBatchReader, tableFromIPC, type RecordBatch, type Table as ArrowTable } from 'apache-arrow';
import { WasmTable } from './wasm/hudi_edge.js';
import { initWasm } from './wasm-loader.js';
import { AbortedError, InvalidArgumentError, toHudiError } from './errors.js';
import { BlobStorage, type LocalFile } from './blob-storage.js';
import { Operation, Tracked, raceAbort, type StorageObject } from './tracking.js';
import { commitOf, infoOf, instantOf, ioOf, layoutOf, planOf } from './normalize.js';
import type {
  Cancellable,
  CommitDetail,
  FileLayout,
  Instant,
  IoStats,
  OpenOptions,
  Plan,
  Progress,
  ReadOptions,
  Row,
  TableInfo,
  TimelineOptions,
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
] as const;

/** The read options the engine understands, as its JSON (signal and callbacks stay here). */
export function readOptionsJson(o: ReadOptions = {}): string {
  const out: Record<string, unknown> = {};
  for (const k of READ_KEYS) if (o[k] !== undefined) out[k] = o[k];
  return JSON.stringify(out, (_, v) => (typeof v === 'bigint' ? v.toString() : v));
}

const WRITE_ACTIONS = new Set(['commit', 'deltacommit', 'replacecommit']);

/** A table's progress as the engine reports it (an object or its JSON). */
const progressOf = (p: unknown): Progress => {
  const v = (typeof p === 'string' ? JSON.parse(p) : p) as Partial<Progress> & Record<string, number>;
  return {
    requests: v.requests ?? 0,
    bytes: v.bytes ?? 0,
    filesDone: v.filesDone ?? v.files_done ?? 0,
    filesTotal: v.filesTotal ?? v.files_total ?? 0,
  };
};

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

/** A Hudi table, open. Release its wasm memory with `close()` when done (or let GC do it). */
export class HudiTable {
  /** Where the table is (credentials and query strings removed). */
  readonly location: string;
  #wasm: WasmTable | null;
  /** Set when the storage is implemented in JS: progress and aborts are tracked here. */
  readonly #tracked: Tracked | null;
  #inFlight = 0;
  #closing = false;
  #layout: Promise<FileLayout> | undefined;
  #history: Promise<unknown> | undefined;
  readonly #commits = new Map<string, Promise<CommitDetail>>();

  private constructor(wasm: WasmTable, tracked: Tracked | null, location: string) {
    this.#wasm = wasm;
    this.#tracked = tracked;
    this.location = location;
  }

  /**
   * Opens the table at `url`: `http(s)://host/path/to/table` or `s3://bucket/prefix`.
   * Reads `hoodie.properties` and lists the active timeline (one round trip).
   */
  static async open(url: string | URL, options: OpenOptions = {}): Promise<HudiTable> {
    const u = parseUrl(url);
    if (!['http:', 'https:', 's3:'].includes(u.protocol)) {
      throw new InvalidArgumentError(`unsupported URL scheme ${u.protocol} (expected http(s)://… or s3://bucket/prefix)`);
    }
    await initWasm();
    const json = JSON.stringify({
      headers: options.headers,
      s3: options.s3,
      listing: options.listing,
      concurrency: options.concurrency,
      retries: options.retries,
    });
    // Progress of the open: the engine reports it per read, so count the fetches here.
    let opening = true;
    const done: Progress = { requests: 0, bytes: 0, filesDone: 0, filesTotal: 0 };
    const base = options.fetch;
    const counted: typeof fetch | undefined = options.onProgress
      ? async (input, init) => {
          const r = await (base ?? globalThis.fetch)(input, init);
          if (opening) {
            done.requests += 1;
            done.bytes += Number(r.headers.get('content-length') ?? 0);
            options.onProgress!({ ...done });
          }
          return r;
        }
      : base;
    const work = WasmTable.openUrl(u.toString(), json, counted, options.presign, options.signal).finally(() => (opening = false));
    work.then((t) => options.signal?.aborted && t.free(), () => {});
    const wasm = await raceAbort(work, options.signal, 'open');
    return new HudiTable(wasm, null, publicLocation(u));
  }

  /**
   * Opens a table over your own storage: an object with async `get(path, start?, end?)`,
   * `head(path)` and `list(prefix, recursive)` (paths relative to the base path; errors with
   * `code` `NOT_FOUND` / `ACCESS_DENIED` / `ABORTED` keep their meaning).
   */
  static async openStorage(storage: StorageObject, options: Cancellable = {}): Promise<HudiTable> {
    await initWasm();
    const tracked = new Tracked(storage);
    const op = new Operation(options.signal, options.onProgress);
    tracked.operations.add(op);
    const work = WasmTable.openJs(tracked).finally(() => tracked.operations.delete(op));
    // Opened after all, but too late: release it.
    work.then((t) => options.signal?.aborted && t.free(), () => {});
    const wasm = await raceAbort(work, options.signal, 'open');
    return new HudiTable(wasm, tracked, storage.location);
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
  static async openZip(zip: Uint8Array | ArrayBuffer | Blob, name = 'table.zip'): Promise<HudiTable> {
    await initWasm();
    const bytes = zip instanceof Uint8Array ? zip : new Uint8Array(zip instanceof Blob ? await zip.arrayBuffer() : zip);
    try {
      return new HudiTable(await WasmTable.openZip(bytes, name), null, `zip://${name}`);
    } catch (e) {
      throw toHudiError(e);
    }
  }

  #alive(): WasmTable {
    if (!this.#wasm || this.#closing) throw new InvalidArgumentError('the table is closed');
    return this.#wasm;
  }

  /** Runs one API call: its progress and abort, error classes, and deferred `close()`. */
  #run<T>(o: Cancellable | undefined, what: string, f: (w: WasmTable, op: Operation) => Promise<T>): Promise<T> {
    let w: WasmTable;
    try {
      w = this.#alive();
    } catch (e) {
      return Promise.reject(e);
    }
    if (o?.signal?.aborted) return Promise.reject(new AbortedError(`aborted: ${what}`, undefined, { cause: o.signal.reason }));
    const op = new Operation(o?.signal, o?.onProgress);
    this.#tracked?.operations.add(op);
    this.#inFlight += 1;
    let work: Promise<T>;
    try {
      work = f(w, op);
    } catch (e) {
      work = Promise.reject(e);
    }
    const done = work.finally(() => {
      this.#tracked?.operations.delete(op);
      this.#inFlight -= 1;
      if (this.#closing && this.#inFlight === 0) this.#free();
    });
    return raceAbort(done, o?.signal, what);
  }

  /** Signal and progress arguments for engine calls that take them. */
  #native(op: Operation, o: Cancellable | undefined): [AbortSignal | undefined, ((p: unknown) => void) | undefined] {
    const cb = o?.onProgress;
    return [o?.signal, cb ? (p: unknown) => { Object.assign(op.progress, progressOf(p)); op.emit(); } : undefined];
  }

  /** Type, version, keys, partitions, file groups, metadata-table partitions, properties. */
  async info(o?: Cancellable): Promise<TableInfo> {
    const config = JSON.parse(this.#alive().config());
    return infoOf(config, await this.fileGroups(o));
  }

  /** The timeline: instants oldest first (archived ones first, when asked for). */
  timeline(o: TimelineOptions = {}): Promise<Instant[]> {
    return this.#run(o, 'timeline', async (w) => {
      const json = JSON.parse(await w.timeline(Boolean(o.archived)));
      if (o.archived) this.#history = Promise.resolve();
      const instants: Instant[] = json.instants.map(instantOf);
      if (o.operations !== false) {
        const writes = instants.filter((i) => i.state === 'completed' && WRITE_ACTIONS.has(i.action));
        const details = await Promise.all(writes.map((i) => this.#commit(w, i.requestedTime).catch(() => null)));
        o.signal?.throwIfAborted();
        writes.forEach((i, n) => (i.operation = details[n]?.operation ?? null));
      }
      return instants;
    });
  }

  /** One instant's metadata: files written, record counts, bytes, replaced file groups, schema. */
  commit(requestedTime: string, o?: Cancellable): Promise<CommitDetail> {
    return this.#run(o, 'commit', (w) => this.#commit(w, requestedTime));
  }

  #commit(w: WasmTable, requestedTime: string): Promise<CommitDetail> {
    const cached = this.#commits.get(requestedTime);
    if (cached) return cached;
    // The engine's `instant()` loads the archived timeline first: do it once, not per instant.
    this.#history ??= w.timeline(true).catch((e) => {
      this.#history = undefined;
      throw e;
    });
    const detail = this.#history
      .then(() => w.instant(requestedTime))
      .then((text) => {
        const v = JSON.parse(text);
        return commitOf(instantOf(v.instant), v.content);
      });
    this.#commits.set(requestedTime, detail);
    detail
      .then((d) => d.instant.state !== 'completed' && this.#commits.delete(requestedTime))
      .catch(() => this.#commits.delete(requestedTime));
    return detail;
  }

  /** Partitions → file groups → file slices (base file, log files, sizes), latest or as of an instant. */
  fileGroups(o: { asOf?: string } & Cancellable = {}): Promise<FileLayout> {
    if (!o.asOf && this.#layout) return this.#layout;
    const layout = this.#run(o, 'fileGroups', async (w) => layoutOf(JSON.parse(await w.fileGroups(o.asOf ?? null))));
    if (!o.asOf) {
      this.#layout = layout;
      layout.catch(() => (this.#layout = undefined));
    }
    return layout;
  }

  /** What a read would do: the file slices it reads, pruning stage by stage, and the I/O planning cost. */
  plan(o: ReadOptions = {}): Promise<Plan> {
    return this.#run(o, 'plan', async (w, op) => {
      const t0 = performance.now();
      const text = await w.plan(readOptionsJson(o), ...this.#native(op, o));
      return planOf(JSON.parse(text), performance.now() - t0);
    });
  }

  /** The rows as an apache-arrow `Table`. */
  read(o: ReadOptions = {}): Promise<ArrowTable> {
    return this.#run(o, 'read', async (w, op) => {
      const bytes = await w.readArrow(readOptionsJson(o), ...this.#native(op, o));
      return tableFromIPC(bytes);
    });
  }

  /** The rows as plain objects (decimals as strings with their scale, timestamps ISO-8601,
   *  dates `YYYY-MM-DD`, binary base64), like the CLI's JSON. */
  rows(o: ReadOptions = {}): Promise<Row[]> {
    return this.#run(o, 'rows', async (w, op) => {
      const text = await w.readJson(readOptionsJson(o), false, ...this.#native(op, o));
      return JSON.parse(text);
    });
  }

  /** The rows as apache-arrow `RecordBatch`es, one at a time. Break out of the loop (or abort)
   *  to stop early; the rest is not read. */
  async *stream(o: ReadOptions = {}): AsyncGenerator<RecordBatch, void, undefined> {
    // The engine's stream reports no progress: totals from the table's I/O counters, and the
    // number of files from the plan (asked for only when progress is wanted).
    const filesTotal = o.onProgress ? (await this.plan({ ...o, onProgress: undefined })).fileSlices.reduce((n, s) => n + (s.baseFile ? 1 : 0) + s.logFiles.length, 0) : 0;
    const start = o.onProgress ? this.io() : null;
    const report = (done: boolean) => {
      if (!o.onProgress || !start || !this.#wasm) return;
      const io = this.io();
      try {
        o.onProgress({ requests: io.requests - start.requests, bytes: io.bytes - start.bytes, filesDone: done ? filesTotal : 0, filesTotal });
      } catch {
        // A throwing callback must not break the read.
      }
    };
    const stream = await this.#run(o, 'stream', async (w) => w.stream(readOptionsJson(o), o.signal));
    try {
      for (;;) {
        const bytes: Uint8Array | undefined = await this.#run(o, 'stream', () => stream.next());
        if (!bytes) {
          report(true);
          return;
        }
        report(false);
        for (const batch of RecordBatchReader.from(bytes)) yield batch;
      }
    } finally {
      stream.close();
      stream.free();
    }
  }

  /** Requests and bytes since the table was opened. */
  io(): IoStats {
    return ioOf(JSON.parse(this.#alive().io()));
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
    this.#wasm?.free();
    this.#wasm = null;
  }
}
