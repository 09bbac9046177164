// What the viewer's first screen costs over plain HTTP (issue 14, item 4): the v9 MOR sample
// served by a loopback nginx with the listing manifest `hudi-edge manifest` writes, opened by
// URL through the npm package (pkg-config/dist) as the viewer opens it. Prints one JSON line
// like `wasm_node.mjs open-cost`.
//
//   node tests/bench/open_cost_http.mjs [FIXTURE]   (default sample_table/mor/avro/v9_txns_simple_meta)
import { join } from 'node:path';
import { repo, startNginx, unzippedFixtures } from '../web/lib/servers.mjs';

const name = process.argv[2] ?? 'sample_table/mor/avro/v9_txns_simple_meta';
const nginx = await startNginx({ mounts: { '/tables/': join(unzippedFixtures(), 'tables') } });
try {
  const { HudiTable } = await import(join(repo, 'pkg-config', 'dist', 'node.js'));
  const t = await HudiTable.open(`${nginx.url}/tables/${name}`);
  await t.timeline({ operations: false });
  await Promise.all([t.info(), t.fileGroups()]);
  const first = t.io();
  await t.timeline({});
  const io = t.io();
  const cost = (x) => ({ requests: x.requests, bytes: x.bytes, round_trips: x.roundTrips, by_purpose: x.byPurpose });
  console.log(JSON.stringify({ via: 'http+manifest', ...cost(first), with_operations: cost(io) }));
  t.close();
} finally {
  await nginx.stop();
}
