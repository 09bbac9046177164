// Progress and cancellation for tables whose storage is implemented in JS: every API call is an
// `Operation`; a `Tracked` storage counts each request towards the operations in flight and
// cancels it when they are all aborted.

import { AbortedError, toHudiError } from './errors.js';
import type { Progress } from './types.js';

/** What the engine's JS storage needs (see src/wasm/js_storage.rs); `signal` is ours. */
export interface StorageObject {
  location: string;
  get(path: string, start?: number, end?: number, signal?: AbortSignal): Promise<Uint8Array>;
  head(path: string, signal?: AbortSignal): Promise<ObjectMeta>;
  list(prefix: string, recursive: boolean, signal?: AbortSignal): Promise<ObjectMeta[]>;
}

export interface ObjectMeta {
  path: string;
  size: number;
  lastModified?: number;
  etag?: string;
  isDir?: boolean;
}

/** Base and log files (not timeline or metadata-table files). */
export const isDataFile = (path: string) =>
  !path.startsWith('.hoodie/') && (/\.(parquet|orc|hfile)$/.test(path) || /\.log\.\d+/.test(path));

/** One API call in flight: its signal, progress callback and running totals. */
export class Operation {
  readonly progress: Progress = { requests: 0, bytes: 0, filesDone: 0, filesTotal: 0 };
  private readonly files = new Set<string>();

  constructor(
    readonly signal?: AbortSignal,
    private readonly onProgress?: (p: Progress) => void,
  ) {}

  /** A request finished: `path` and how many bytes came back. */
  record(path: string, bytes: number) {
    this.progress.requests += 1;
    this.progress.bytes += bytes;
    if (isDataFile(path) && !this.files.has(path)) {
      this.files.add(path);
      this.progress.filesDone = this.files.size;
      this.progress.filesTotal = Math.max(this.progress.filesTotal, this.files.size);
    }
    this.emit();
  }

  setFilesTotal(n: number) {
    this.progress.filesTotal = Math.max(n, this.progress.filesDone);
    this.emit();
  }

  emit() {
    if (!this.onProgress) return;
    try {
      this.onProgress({ ...this.progress });
    } catch {
      // A throwing callback must not break the read.
    }
  }
}

export class Tracked implements StorageObject {
  readonly operations = new Set<Operation>();
  readonly location: string;

  constructor(private readonly inner: StorageObject) {
    this.location = inner.location;
  }

  /** Runs one storage call for the operations in flight now. */
  private async call<T>(path: string, f: (signal: AbortSignal | undefined) => Promise<T>, size: (v: T) => number): Promise<T> {
    const ops = [...this.operations];
    // A request serves every operation in flight; cancel it only when all of them are aborted.
    const signals = ops.map((o) => o.signal).filter((s): s is AbortSignal => Boolean(s));
    let signal: AbortSignal | undefined;
    const cleanup: (() => void)[] = [];
    if (ops.length > 0 && signals.length === ops.length) {
      const controller = new AbortController();
      const check = () => {
        if (signals.every((s) => s.aborted)) controller.abort(signals[0]!.reason);
      };
      for (const s of signals) {
        s.addEventListener('abort', check);
        cleanup.push(() => s.removeEventListener('abort', check));
      }
      check();
      signal = controller.signal;
      if (signal.aborted) throw abortError(path);
    }
    try {
      const v = await f(signal);
      for (const op of ops) op.record(path, size(v));
      return v;
    } catch (e) {
      if (signal?.aborted) throw abortError(path);
      throw e;
    } finally {
      for (const c of cleanup) c();
    }
  }

  get(path: string, start?: number, end?: number) {
    return this.call(path, (s) => this.inner.get(path, start, end, s), (b) => b.byteLength);
  }

  head(path: string) {
    return this.call(path, (s) => this.inner.head(path, s), () => 0);
  }

  list(prefix: string, recursive: boolean) {
    return this.call(prefix, (s) => this.inner.list(prefix, recursive, s), () => 0);
  }
}

export function abortError(path: string) {
  return Object.assign(new Error(`request for ${path} was aborted`), { code: 'ABORTED' });
}

/** Rejects as soon as `signal` aborts (the work itself is cancelled through the storage). */
export function raceAbort<T>(work: Promise<T>, signal: AbortSignal | undefined, what: string): Promise<T> {
  const settled = work.catch((e) => Promise.reject(toHudiError(e)));
  if (!signal) return settled;
  const aborted = () => new AbortedError(`aborted: ${what}`, undefined, { cause: signal.reason });
  if (signal.aborted) {
    settled.catch(() => {});
    return Promise.reject(aborted());
  }
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(aborted());
    signal.addEventListener('abort', onAbort, { once: true });
    settled.then(
      (v) => {
        signal.removeEventListener('abort', onAbort);
        resolve(v);
      },
      (e) => {
        signal.removeEventListener('abort', onAbort);
        reject(e);
      },
    );
  });
}
