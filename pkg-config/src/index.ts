// hudi-edge: read (and write to) Apache Hudi tables from browsers, Node and edge workers.
//
//   import { HudiTable } from 'hudi-edge';
//   const table = await HudiTable.open('https://example.com/tables/trips/');
//   console.log(await table.timeline());
//   const rows = await table.rows({ filters: [['city', '=', 'chennai']], limit: 10 });
//
// The package's entry points (browser.js, node.js, workerd.js) differ only in how they load the
// wasm module; they all export this.

export { HudiTable, discover, readOptionsJson, writeManifest, MANIFEST_PATH } from './table.js';
export { MetadataCache, DEFAULT_METADATA_CACHE_BYTES } from './metadata-cache.js';
export { initWasm, wasmMemoryBytes, type WasmInput } from './wasm-loader.js';
export {
  HudiError,
  NotFoundError,
  AccessDeniedError,
  CorruptError,
  UnsupportedError,
  InvalidArgumentError,
  InvalidInputError,
  ConflictError,
  AbortedError,
  ReadOnlyError,
  IoError,
  type ErrorCode,
} from './errors.js';
export { BlobStorage, type LocalFile } from './blob-storage.js';
export type { StorageObject, ObjectMeta } from './storage-object.js';
export type * from './types.js';
