// Compile + instantiate of the wasm module in headless Chromium: the wasm-bindgen `--target
// web` bindings' init() handed the module's bytes (already downloaded, so no network and no
// code cache), in a fresh browser context per run. Prints one JSON line.
//
//   node tests/bench/wasm_startup_chromium.mjs [WASM_WEB_DIR] [RUNS]
//
// WASM_WEB_DIR defaults to $CARGO_TARGET_DIR/wasm-web; Chromium is $HUDI_EDGE_CHROMIUM
// (/usr/bin/chromium); playwright-core comes from tests/web (npm ci there).
import { createServer } from 'node:http';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const repo = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const dir = process.argv[2] ?? join(process.env.CARGO_TARGET_DIR ?? join(repo, 'target'), 'wasm-web');
const runs = Number(process.argv[3] ?? 5);
const { chromium } = createRequire(join(repo, 'tests', 'web', 'package.json'))('playwright-core');

const files = { '/hudi_edge.js': 'text/javascript', '/hudi_edge_bg.wasm': 'application/wasm', '/': 'text/html' };
const server = createServer((req, res) => {
  const type = files[req.url];
  if (!type) return res.writeHead(404).end();
  res.writeHead(200, { 'content-type': type });
  res.end(req.url === '/' ? '<!doctype html><title>startup</title>' : readFileSync(join(dir, req.url)));
});
await new Promise((r) => server.listen(0, '127.0.0.1', r));
const origin = `http://127.0.0.1:${server.address().port}`;
const browser = await chromium.launch({ executablePath: process.env.HUDI_EDGE_CHROMIUM ?? '/usr/bin/chromium', args: ['--no-sandbox'] });
const times = [];
try {
  for (let i = 0; i < runs; i++) {
    const context = await browser.newContext();
    const page = await context.newPage();
    await page.goto(`${origin}/`);
    times.push(
      await page.evaluate(async () => {
        const bytes = await (await fetch('/hudi_edge_bg.wasm')).arrayBuffer();
        const bindings = await import('/hudi_edge.js');
        const t0 = performance.now();
        await bindings.default({ module_or_path: bytes });
        return performance.now() - t0;
      }),
    );
    await context.close();
  }
} finally {
  await browser.close();
  server.close();
}
const median = [...times].sort((a, b) => a - b)[Math.floor(times.length / 2)];
console.log(JSON.stringify({ runtime: 'chromium', compile_instantiate_ms: Math.round(median * 10) / 10, runs, all_ms: times.map((t) => Math.round(t)) }));
