// `MetadataCache`: metadata-table file content kept across table handles. A worker isolate that
// opens the table on every request keeps one at module level and passes it to each
// `HudiTable.open`, so the record-index HFile blocks and MDT log files read (or written) by
// earlier requests are not fetched again.

import type { WasmMdtCache } from './wasm/hudi_edge.js';
import { readEngine, type Engine } from './wasm-loader.js';
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
  /** One per module loaded: a module's cache lives in its memory. */
  readonly #wasm = new Map<Engine, WasmMdtCache>();

  constructor(options: MetadataCacheOptions = {}) {
    const max = options.maxBytes ?? DEFAULT_METADATA_CACHE_BYTES;
    if (!Number.isSafeInteger(max) || max < 0) throw new InvalidArgumentError(`maxBytes must be a non-negative integer, got ${max}`);
    this.maxBytes = max;
  }

  /** What is held and what it saved (zeros before the first open with it). */
  stats(): MetadataCacheStats {
    const sum: MetadataCacheStats = { maxBytes: this.maxBytes, bytes: 0, files: 0, hits: 0, misses: 0, hitBytes: 0, written: 0, evicted: 0 };
    for (const c of this.#wasm.values()) {
      const s = c.stats() as MetadataCacheStats;
      for (const k of ['bytes', 'files', 'hits', 'misses', 'hitBytes', 'written', 'evicted'] as const) sum[k] += s[k];
    }
    return sum;
  }

  /** Drops every file held (the counters stay). */
  clear(): void {
    for (const c of this.#wasm.values()) c.clear();
  }

  /** @internal A handle on `engine`'s cache for one open (default: the module reads run in). */
  async share(engine?: Engine): Promise<WasmMdtCache> {
    const e = engine ?? (await readEngine());
    let cache = this.#wasm.get(e);
    if (!cache) this.#wasm.set(e, (cache = new e.WasmMdtCache(this.maxBytes)));
    return cache.share();
  }
}
