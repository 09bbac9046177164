// Cold start of a workerd worker that holds the wasm module: from `workerd serve` to the
// first answer, with the module (compiled when workerd loads the config, instantiated by the
// bindings' initSync at the worker's top level) and without it (the same worker, no wasm);
// the difference is what the module costs. Inside a worker the clock stands still while code
// runs, so it is timed from outside. Prints one JSON line.
//
//   node tests/bench/wasm_startup_workerd.mjs [WASM_WEB_DIR] [RUNS]
//
// WASM_WEB_DIR defaults to $CARGO_TARGET_DIR/wasm-web; workerd comes from tests/http (npm ci).
import { spawn } from 'node:child_process';
import { cpSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const repo = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const wasmWeb = process.argv[2] ?? join(process.env.CARGO_TARGET_DIR ?? join(repo, 'target'), 'wasm-web');
const runs = Number(process.argv[3] ?? 5);
const workerd = join(repo, 'tests', 'http', 'node_modules', '.bin', 'workerd');

const freePort = () =>
  new Promise((resolve) => {
    const s = createServer();
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
  });

function config(port, withWasm) {
  const modules = [`(name = "worker.mjs", esModule = embed "worker.mjs")`];
  if (withWasm) modules.push(`(name = "hudi_edge.js", esModule = embed "hudi_edge.js")`, `(name = "hudi_edge_bg.wasm", wasm = embed "hudi_edge_bg.wasm")`);
  return `using Workerd = import "/workerd/workerd.capnp";
const config :Workerd.Config = (
  services = [ (name = "main", worker = .worker) ],
  sockets = [ (name = "http", address = "127.0.0.1:${port}", http = (), service = "main") ],
);
const worker :Workerd.Worker = (
  modules = [ ${modules.join(', ')} ],
  compatibilityDate = "2024-09-23",
);
`;
}

const worker = (withWasm) =>
  withWasm
    ? `import { initSync } from './hudi_edge.js';
import module from './hudi_edge_bg.wasm';
initSync({ module });
export default { fetch: () => new Response('ok') };
`
    : `export default { fetch: () => new Response('ok') };
`;

async function coldStart(withWasm) {
  const dir = mkdtempSync(join(tmpdir(), 'hudi-edge-startup-'));
  try {
    if (withWasm) for (const f of ['hudi_edge.js', 'hudi_edge_bg.wasm']) cpSync(join(wasmWeb, f), join(dir, f));
    const port = await freePort();
    writeFileSync(join(dir, 'worker.mjs'), worker(withWasm));
    writeFileSync(join(dir, 'config.capnp'), config(port, withWasm));
    const t0 = performance.now();
    const child = spawn(workerd, ['serve', join(dir, 'config.capnp')], { stdio: 'ignore' });
    try {
      for (;;) {
        try {
          const r = await fetch(`http://127.0.0.1:${port}/`);
          if (r.ok && (await r.text()) === 'ok') return performance.now() - t0;
        } catch {
          // not listening yet
        }
        if (performance.now() - t0 > 60_000) throw new Error('workerd did not answer in 60 s');
        await new Promise((r) => setTimeout(r, 5));
      }
    } finally {
      child.kill();
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const withWasm = [];
const without = [];
for (let i = 0; i < runs; i++) {
  without.push(await coldStart(false));
  withWasm.push(await coldStart(true));
}
const round = (x) => Math.round(x * 10) / 10;
console.log(
  JSON.stringify({
    runtime: 'workerd',
    cold_start_with_module_ms: round(median(withWasm)),
    cold_start_without_module_ms: round(median(without)),
    module_cost_ms: round(median(withWasm) - median(without)),
    runs,
  }),
);
