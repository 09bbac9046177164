// `MetadataCache`: metadata-table file content kept across table handles. A worker isolate that
// opens the table on every request keeps one at module level and passes it to each
// `HudiTable.open`, so the record-index HFile blocks and MDT log files read (or written) by
// earlier requests are not fetched again.

import { WasmMdtCache } from './wasm/hudi_edge.js';
import { initWasm } from './wasm-loader.js';
import { InvalidArgumentError } from './errors.js';
import type { MetadataCacheOptions, MetadataCacheStats } from './types.js';

/** The default budget: 16 MiB. */
export const DEFAULT_METADATA_CACHE_BYTES = 16 * 1024 * 1024;

/**
 * A bounded cache of metadata-table files (base HFiles and log files of the `files`,
 * `column_stats`, `partition_stats` and `record_index` partitions), shared by every table
 * opened with it. A file is answered from the cache only while the opening handle's listing
 * shows it with the size and ETag it had when cached, so a rewritten or removed file is never
 * served stale; timeline files, `hoodie.properties` and listings are never cached. Past
 * `maxBytes` the least recently used files are dropped.
 *
 *   const cache = new MetadataCache();                  // module level: lives with the isolate
 *   const t = await HudiTable.open(url, { s3, cache });  // per request
 */
export class MetadataCache {
  readonly maxBytes: number;
  #wasm: WasmMdtCache | undefined;

  constructor(options: MetadataCacheOptions = {}) {
    const max = options.maxBytes ?? DEFAULT_METADATA_CACHE_BYTES;
    if (!Number.isSafeInteger(max) || max < 0) throw new InvalidArgumentError(`maxBytes must be a non-negative integer, got ${max}`);
    this.maxBytes = max;
  }

  /** What is held and what it saved (zeros before the first open with it). */
  stats(): MetadataCacheStats {
    return this.#wasm ? (this.#wasm.stats() as MetadataCacheStats) : { maxBytes: this.maxBytes, bytes: 0, files: 0, hits: 0, misses: 0, hitBytes: 0, written: 0, evicted: 0 };
  }

  /** Drops every file held (the counters stay). */
  clear(): void {
    this.#wasm?.clear();
  }

  /** @internal A handle on the engine's cache for one open (the module must be loaded). */
  async share(): Promise<WasmMdtCache> {
    await initWasm();
    this.#wasm ??= new WasmMdtCache(this.maxBytes);
    return this.#wasm.share();
  }
}
