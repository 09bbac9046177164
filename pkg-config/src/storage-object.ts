// What `HudiTable.openStorage` takes: the engine's JS storage (src/wasm/js_storage.rs).

/** Paths are relative to the table's base path. `signal` aborts when the engine no longer
 *  needs the answer (the operation was aborted). */
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
