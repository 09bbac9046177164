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
