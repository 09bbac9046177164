// The first-rows benches' peer: hyparquet reading one Parquet file of a table through a bench
// storage (`get`, `head`), as its `asyncBufferFromUrl` reads a URL: the size by HEAD, then
// ranges. Shared by wasm_node.mjs (Node) and first_rows_chromium.mjs (bundled into the page);
// the callers import hyparquet themselves, inside their clocks.

/** The rows of `path` matching `filter` (hyparquet's filter object; it skips row groups and
 *  pages by their statistics), or without one its first 10 rows. hyparquet reads INT64 as
 *  BigInt and compares strictly, so the filter's numbers on INT64 columns become BigInts (from
 *  the footer, which the read then reuses). */
export async function hyparquetRows({ parquetMetadataAsync, parquetReadObjects }, compressors, storage, path, filter) {
  const { size } = await storage.head(path);
  const file = {
    byteLength: size,
    slice: async (start, end = size) => {
      const bytes = await storage.get(path, start, end);
      return bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength);
    },
  };
  const metadata = await parquetMetadataAsync(file);
  const int64 = new Set(metadata.schema.filter((e) => e.type === 'INT64').map((e) => e.name));
  const typed = (v, column) => {
    if (typeof v === 'number' && int64.has(column)) return BigInt(v);
    if (!v || typeof v !== 'object') return v;
    return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, typed(x, k.startsWith('$') ? column : k)]));
  };
  return parquetReadObjects({ file, metadata, compressors, ...(filter ? { filter: typed(filter) } : { rowEnd: 10 }) });
}
