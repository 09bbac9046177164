// What `HudiTable.openStorage` takes: the engine's JS storage (src/wasm/js_storage.rs).

/** Paths are relative to the table's base path. `signal` aborts when the engine no longer
 *  needs the answer (the operation was aborted). */
export interface StorageObject {
  location: string;
  get(path: string, start?: number, end?: number, signal?: AbortSignal): Promise<Uint8Array>;
  head(path: string, signal?: AbortSignal): Promise<ObjectMeta>;
  list(prefix: string, recursive: boolean, signal?: AbortSignal): Promise<ObjectMeta[]>;
  /** Optional: every object under the base path, recursively, whose path sorts after
   *  `startAfter` (byte order, as S3 ListObjectsV2's `start-after`). With it, listing a
   *  table's partitions skips the whole `.hoodie/` tree in one listing instead of one per
   *  directory. */
  listAfter?(startAfter: string, signal?: AbortSignal): Promise<ObjectMeta[]>;
  /** For `write()` (with `delete`; without both, writes are refused as `UNSUPPORTED`).
   *  `mode` `'create'` must fail when the object exists (throw or answer an error with
   *  `conflict: true` or `code: 'CONFLICT'`): it is the commit point. `'overwrite'` replaces;
   *  any other string is an etag the object must still have. */
  put?(path: string, data: Uint8Array, mode: 'create' | 'overwrite' | string, signal?: AbortSignal): Promise<ObjectMeta | void>;
  /** Removes an object (a missing one is not an error). */
  delete?(path: string, signal?: AbortSignal): Promise<void>;
}

export interface ObjectMeta {
  path: string;
  size: number;
  lastModified?: number;
  etag?: string;
  isDir?: boolean;
}

/** What the engine reads of a listing's entry, each field kept only with the type it reads. */
function engineEntry(m: ObjectMeta) {
  const num = (x: unknown) => (typeof x === 'number' && Number.isFinite(x) ? x : undefined);
  const str = (x: unknown) => (typeof x === 'string' ? x : undefined);
  return { path: str(m.path), size: num(m.size), lastModified: num(m.lastModified), etag: str(m.etag), isDir: m.isDir === true || undefined };
}

/** @internal `storage`'s optional methods, bound to it, only those it has: the engine tells what a
 *  storage can do from which methods it has, so a wrapper must not add any. */
export function optionalMethods(storage: StorageObject): Pick<StorageObject, 'listAfter' | 'put' | 'delete'> {
  const out: Pick<StorageObject, 'listAfter' | 'put' | 'delete'> = {};
  if (storage.listAfter) out.listAfter = storage.listAfter.bind(storage);
  if (storage.put) out.put = storage.put.bind(storage);
  if (storage.delete) out.delete = storage.delete.bind(storage);
  return out;
}

const utf8 = new TextEncoder();

/** @internal `storage` as the engine is handed it: listings go over as JSON bytes, which the
 *  engine reads in one step instead of five property reads per entry across the wasm boundary
 *  (a metadata table's thousand files cost ~15 ms of a cold open). The fields are read here as
 *  the engine reads them (getters included); methods keep `storage` as `this`. */
export function engineStorage(storage: StorageObject): StorageObject {
  const pack = (list: ObjectMeta[]) => utf8.encode(JSON.stringify(Array.from(list, engineEntry))) as unknown as ObjectMeta[];
  const optional = optionalMethods(storage);
  const listAfter = optional.listAfter;
  return {
    ...optional,
    location: storage.location,
    get: (path, start, end, signal) => storage.get(path, start, end, signal),
    head: (path, signal) => storage.head(path, signal),
    list: async (prefix, recursive, signal) => pack(await storage.list(prefix, recursive, signal)),
    ...(listAfter && { listAfter: async (startAfter: string, signal?: AbortSignal) => pack(await listAfter(startAfter, signal)) }),
  };
}
