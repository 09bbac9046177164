// Servers for the HTTP tests: nginx, moto and the fixture tables come from tests/lib (one
// harness for every JS suite); workerd (npm) is started here. Nothing listens on anything
// but loopback.
import { cpSync, writeFileSync } from 'node:fs';
import { join, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { cliBin, launch, repo, requireBinary, targetDir, tempDir, freePort, waitFor } from '../lib/harness.mjs';
import { fixtures, fixtureNames, unzippedFixtures } from '../lib/fixtures.mjs';
import { startNginx as startLibNginx, startMoto as startLibMoto, S3_CREDS, BUCKET } from '../lib/servers.mjs';

export { cliBin, targetDir, repo, fixtures, fixtureNames, S3_CREDS, BUCKET };

export const here = dirname(fileURLToPath(import.meta.url));
export const wasmNode = process.env.HUDI_EDGE_WASM_NODE ?? join(targetDir, 'wasm-node');
export const wasmWeb = process.env.HUDI_EDGE_WASM_WEB ?? join(targetDir, 'wasm-web');

/// The fixture tables (each with a CLI-written manifest) under `<dir>/<name>/`: the shared
/// tree, read-only.
export const tablesDir = () => join(unzippedFixtures(), 'tables');

// A hung HTTP test must not keep its servers: they go after 20 minutes whatever happens.
const MAX_MS = 20 * 60_000;

/// nginx serving `root` at '/' (plus `mounts`), uncompressed: the request and byte counts
/// the tests compare are the files' own.
export const startNginx = (root, mounts = {}) => startLibNginx({ mounts: { '/': root, ...mounts }, gzip: false, maxMs: MAX_MS });

/// moto holding every fixture table of `tables` under `s3://hudi-tables/<name>/`.
export const startMoto = (tables) => startLibMoto({ tables, maxMs: MAX_MS });

// ---------------------------------------------------------------------------------------
// workerd

/// workerd running `workerModule` (with the wasm-web build and the fixture checks as
/// modules); loopback reachable through the `internet` service.
export async function startWorkerd(workerSource, bindings = {}) {
  const dir = tempDir('workerd');
  const port = await freePort();
  cpSync(join(wasmWeb, 'hudi_edge.js'), join(dir, 'hudi_edge.js'));
  cpSync(join(wasmWeb, 'hudi_edge_bg.wasm'), join(dir, 'hudi_edge_bg.wasm'));
  cpSync(join(repo, 'tests', 'js', 'fixture_checks.mjs'), join(dir, 'fixture_checks.mjs'));
  writeFileSync(join(dir, 'worker.mjs'), workerSource);
  const b = Object.entries(bindings)
    .map(([k, v]) => `(name = "${k}", text = ${JSON.stringify(String(v))})`)
    .join(', ');
  writeFileSync(
    join(dir, 'config.capnp'),
    `using Workerd = import "/workerd/workerd.capnp";
const config :Workerd.Config = (
  services = [
    (name = "main", worker = .worker),
    (name = "internet", network = (allow = ["public", "private", "local"])),
  ],
  sockets = [ (name = "http", address = "127.0.0.1:${port}", http = (), service = "main") ],
);
const worker :Workerd.Worker = (
  modules = [
    (name = "worker.mjs", esModule = embed "worker.mjs"),
    (name = "hudi_edge.js", esModule = embed "hudi_edge.js"),
    (name = "fixture_checks.mjs", esModule = embed "fixture_checks.mjs"),
    (name = "hudi_edge_bg.wasm", wasm = embed "hudi_edge_bg.wasm"),
  ],
  compatibilityDate = "2024-09-23",
  bindings = [ ${b} ],
);
`,
  );
  const bin = requireBinary(join(here, 'node_modules', '.bin', 'workerd'), 'workerd (npm ci in tests/http)');
  const server = launch(bin, ['serve', join(dir, 'config.capnp'), '--verbose'], { name: 'workerd' });
  const url = `http://127.0.0.1:${port}`;
  await waitFor(`${url}/health`, server, 60_000);
  return { ...server, url };
}
