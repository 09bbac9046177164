// Shared by the package tests: one loopback nginx per test file serving the fixture tables,
// and the fixtures' expected results.
import { after, before } from 'node:test';
import { canonical, oracleEncoding } from '../../tests/js/fixture_checks.mjs';
import { expected, startNginx, unzippedFixtures } from '../../tests/web/lib/servers.mjs';

export { canonical, expected, oracleEncoding };

/** The tables the tests read: a v6 COW, a v9 COW and a v9 MOR fixture. */
export const V6 = 'sample_table/cow/v6_complexkeygen_hivestyle';
export const V9 = 'sample_table/cow/v9_txns_simple_meta';
export const V9_MOR = 'sample_table/mor/avro/v9_txns_simple_meta';

/** Starts nginx before the file's tests (extra mounts: { '/broken/': dir }); returns a getter. */
export function useNginx(extraMounts = () => ({})) {
  const state = {};
  before(async () => {
    state.root = unzippedFixtures();
    state.nginx = await startNginx({ mounts: { '/tables/': `${state.root}/tables`, '/generated/': `${state.root}/generated`, '/cdc/': `${state.root}/cdc`, ...extraMounts(state.root) } });
    state.url = state.nginx.url;
  });
  after(async () => state.nginx?.stop());
  return state;
}

/** Rows as the fixtures write them, in their order. */
export function sameRows(got, exp, want) {
  const keys = exp.table.record_key_fields ?? [];
  return [canonical(oracleEncoding(got, exp.snapshot.schema), keys), canonical(want, keys)];
}

export const keysWithPartition = (rows) => rows.map((r) => [r._hoodie_record_key, r._hoodie_partition_path]).sort();
