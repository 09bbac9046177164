// Shared by the package tests: one loopback nginx per test file serving the fixture tables,
// and the fixtures' expected results.
import { after, before } from 'node:test';
import { canonical, expected, startNginx, unzippedFixtures } from '../../tests/web/lib/servers.mjs';

export { canonical, expected };

/** The tables the tests read: a v6 COW, a v9 COW and a v9 MOR fixture. */
export const V6 = 'sample_table/cow/v6_complexkeygen_hivestyle';
export const V9 = 'sample_table/cow/v9_txns_simple_meta';
export const V9_MOR = 'sample_table/mor/avro/v9_txns_simple_meta';

/** Starts nginx before the file's tests (extra mounts: { '/broken/': dir }); returns a getter. */
export function useNginx(extraMounts = () => ({})) {
  const state = {};
  before(async () => {
    state.root = unzippedFixtures();
    state.nginx = await startNginx({ mounts: { '/tables/': `${state.root}/tables`, '/generated/': `${state.root}/generated`, ...extraMounts(state.root) } });
    state.url = state.nginx.url;
  });
  after(async () => state.nginx?.stop());
  return state;
}

/** The fixtures' value encoding (binary as hex, maps as [key, value] pairs) from the package's
 *  (base64, objects), for the columns whose type says so. */
export function oracleEncoding(rows, schema) {
  const binary = schema.filter((f) => f.type === 'binary' || f.type === 'large_binary').map((f) => f.name);
  const maps = schema.filter((f) => f.type.startsWith('map<')).map((f) => f.name);
  return rows.map((r) => {
    const c = { ...r };
    for (const k of binary) if (typeof c[k] === 'string') c[k] = Buffer.from(c[k], 'base64').toString('hex');
    for (const k of maps) if (c[k] && typeof c[k] === 'object' && !Array.isArray(c[k])) c[k] = Object.entries(c[k]);
    return c;
  });
}

/** Rows as the fixtures write them, in their order. */
export function sameRows(got, exp, want) {
  const keys = exp.table.record_key_fields ?? [];
  return [canonical(oracleEncoding(got, exp.snapshot.schema), keys), canonical(want, keys)];
}

export const keysWithPartition = (rows) => rows.map((r) => [r._hoodie_record_key, r._hoodie_partition_path]).sort();
