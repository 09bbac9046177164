// Cold first rows in headless Chromium through the npm package: a page (esbuild bundle of the
// package's browser entry, the package in its own chunk) loads apache-arrow, then starts the
// clock, imports the package (which starts compiling its module), opens TABLE over a storage
// object whose every request the server answers after DELAY_MS, and stops at the first batch
// of `stream()` with FILTER. Each run is a fresh browser context (no HTTP cache, no compiled
// code); `reload_ms` is the same page loaded again in that context, where Chromium may take
// the module's compiled code from its cache. Prints one JSON line.
//
//   node tests/bench/first_rows_chromium.mjs TABLE FILTER [DELAY_MS] [RUNS]
//
// HTTP=2 serves the page, the module and the table over HTTP/2 (TLS, a certificate made for
// the run), as a CDN or R2 does, instead of HTTP/1.1 (S3's), where Chromium opens at most 6
// connections per host and a round of more requests waits in line.
//
// PEER=hyparquet FILE=PATH: the peer instead of the package, hyparquet (tests/js) reading the
// one Parquet file PATH of TABLE the query reads; FILTER is then hyparquet's filter as JSON
// (e.g. '{"id":500000}'), or '' for its first 10 rows.
//
// TRACE_OUT=FILE writes a Chrome trace of the first cold run (tests/bench/wasm_trace_summary.mjs
// sums V8's wasm work in it); PROFILE=FILE a CPU profile of the page's main thread.
//
// JS_FLAGS passes V8 flags to Chromium, for experiments on where cold time goes (e.g.
// --no-wasm-dynamic-tiering: Liftoff code only; --wasm-lazy-validation); no user can set them.
//
// The package is $HUDI_EDGE_PKG_DIST (default pkg-config/dist, `npm run build`); Chromium is
// $HUDI_EDGE_CHROMIUM (/usr/bin/chromium); playwright-core comes from tests/web.
import { createServer } from 'node:http';
import { createSecureServer } from 'node:http2';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync, existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, extname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { fsStorage } from '../js/fs_storage.mjs';

const repo = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const [table, filter, delayArg = '20', runsArg = '5'] = process.argv.slice(2);
if (!table || filter === undefined || (!filter && process.env.PEER !== 'hyparquet')) {
  console.error('usage: first_rows_chromium.mjs TABLE FILTER [DELAY_MS] [RUNS]');
  process.exit(2);
}
const delay = Number(delayArg);
const runs = Number(runsArg);
const dist = process.env.HUDI_EDGE_PKG_DIST ?? join(repo, 'pkg-config', 'dist');
const { chromium } = createRequire(join(repo, 'tests', 'web', 'package.json'))('playwright-core');

// The page: apache-arrow first (the app's), then the package, timed. With PEER=hyparquet the
// page reads the table's file FILE with hyparquet instead, timed from its import.
const peer = process.env.PEER === 'hyparquet';
const peerFile = process.env.FILE;
if (peer && !peerFile) {
  console.error('PEER=hyparquet needs FILE, the Parquet file of TABLE to read');
  process.exit(2);
}
const app = mkdtempSync(join(tmpdir(), 'first-rows-chromium-'));
// Requests counted in the page for the peer (the package counts its own): rounds are requests
// started while none was in flight.
const storageJs = `const calls = { requests: 0, rounds: 0, inFlight: 0 };
const call = async (op, q) => {
  calls.requests++;
  if (calls.inFlight++ === 0) calls.rounds++;
  try {
    const r = await fetch('/s/' + op + '?' + new URLSearchParams(q));
    if (r.status === 404) throw Object.assign(new Error('not found: ' + q.path), { code: 'NOT_FOUND' });
    if (!r.ok) throw new Error(op + ' ' + r.status);
    return op === 'get' ? new Uint8Array(await r.arrayBuffer()) : r.json();
  } finally {
    calls.inFlight--;
  }
};
const storage = {
  location: 'bench://table',
  get: (path, start, end) => call('get', start === undefined ? { path } : { path, start, end }),
  head: (path) => call('head', { path }),
  list: (prefix, recursive) => call('list', { prefix, recursive }),
};
const protocols = () => [...new Set(performance.getEntriesByType('resource').map((e) => e.nextHopProtocol))];
`;
const packagePage = `await import('apache-arrow');
const filter = ${JSON.stringify(filter)};
${storageJs}
const t0 = performance.now();
const { HudiTable } = await import('./pkg.js');
const imported = performance.now() - t0;
const t = await HudiTable.openStorage(storage, { prefetchMetadataTable: true });
for await (const b of t.stream({ filters: [filter] })) break;
const ms = performance.now() - t0;
const io = t.io();
t.close();
window.result = { ms, imported_ms: imported, requests: io.requests, round_trips: io.roundTrips, protocols: protocols() };
`;
// As wasm_node.mjs first-rows-hyparquet (the same hyparquet_peer.mjs, bundled).
const peerPage = () => `import { hyparquetRows } from ${JSON.stringify(join(repo, 'tests', 'bench', 'hyparquet_peer.mjs'))};
${storageJs}
const path = ${JSON.stringify(peerFile)};
const filter = ${JSON.stringify(filter ? JSON.parse(filter) : null)};
const t0 = performance.now();
const hyparquet = await import('hyparquet');
const { compressors } = await import('hyparquet-compressors');
const imported = performance.now() - t0;
const rows = await hyparquetRows(hyparquet, compressors, storage, path, filter);
const ms = performance.now() - t0;
window.result = { ms, imported_ms: imported, rows: rows.length, requests: calls.requests, round_trips: calls.rounds, protocols: protocols() };
`;
writeFileSync(join(app, 'main.js'), peer ? peerPage() : packagePage);
writeFileSync(join(app, 'pkg.js'), `export * from ${JSON.stringify(join(dist, 'browser.js'))};\n`);
const esbuild = join(repo, 'pkg-config', 'node_modules', '.bin', 'esbuild');
execFileSync(esbuild, ['main.js', ...(peer ? [] : ['pkg.js']), '--bundle', '--splitting', '--format=esm', '--outdir=out', '--log-level=warning', `--resolve-extensions=.js,.mjs`], {
  cwd: app,
  env: { ...process.env, NODE_PATH: [join(repo, 'pkg-config', 'node_modules'), join(repo, 'tests', 'js', 'node_modules')].join(':') },
});

// Listings come from an index made now, as an object store answers a LIST (LISTING=walk: the
// server walks the directories on each list, on the cores the browser runs on).
const listing = process.env.LISTING === 'walk' ? 'walk' : 'index';
const storage = fsStorage(table, { listIndex: listing === 'index' });
const types = { '.js': 'text/javascript', '.wasm': 'application/wasm', '.html': 'text/html' };
const http2 = process.env.HTTP === '2';
const handler = async (req, res) => {
  const url = new URL(req.url, 'http://x');
  try {
    if (url.pathname.startsWith('/s/')) {
      await new Promise((r) => setTimeout(r, delay));
      const q = Object.fromEntries(url.searchParams);
      const op = url.pathname.slice(3);
      let body;
      if (op === 'get') body = await storage.get(q.path, q.start === undefined ? undefined : Number(q.start), q.end === undefined ? undefined : Number(q.end));
      else if (op === 'head') body = JSON.stringify(await storage.head(q.path));
      else body = JSON.stringify(await storage.list(q.prefix, q.recursive === 'true'));
      res.writeHead(200, { 'content-type': op === 'get' ? 'application/octet-stream' : 'application/json' });
      return res.end(body);
    }
    const file = url.pathname === '/' ? join(app, 'index.html') : url.pathname.startsWith('/wasm/') ? join(dist, url.pathname) : join(app, 'out', url.pathname);
    if (!existsSync(file)) return res.writeHead(404).end();
    // Cacheable, as a static host serves a versioned asset: Chromium caches the compiled
    // module beside an HTTP-cached response.
    res.writeHead(200, { 'content-type': types[extname(file)] ?? 'application/octet-stream', 'cache-control': 'public, max-age=3600' });
    res.end(readFileSync(file));
  } catch (e) {
    res.writeHead(e.code === 'ENOENT' ? 404 : 500).end(String(e.message));
  }
};
let server;
if (http2) {
  execFileSync('openssl', ['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-keyout', join(app, 'key.pem'), '-out', join(app, 'cert.pem'), '-days', '1', '-subj', '/CN=127.0.0.1', '-addext', 'subjectAltName=IP:127.0.0.1'], { stdio: 'ignore' });
  server = createSecureServer({ key: readFileSync(join(app, 'key.pem')), cert: readFileSync(join(app, 'cert.pem')) }, handler);
} else {
  server = createServer(handler);
}
writeFileSync(join(app, 'index.html'), '<!doctype html><title>first rows</title><script type="module" src="/main.js"></script>');
await new Promise((r) => server.listen(0, '127.0.0.1', r));
const origin = `${http2 ? 'https' : 'http'}://127.0.0.1:${server.address().port}`;
const browser = await chromium.launch({ executablePath: process.env.HUDI_EDGE_CHROMIUM ?? '/usr/bin/chromium', args: [...(process.env.JS_FLAGS ? [`--js-flags=${process.env.JS_FLAGS}`] : []), '--no-sandbox', ...(http2 ? ['--ignore-certificate-errors'] : [])] });
const cold = [];
const reload = [];
let last;
try {
  for (let i = 0; i < runs; i++) {
    const context = await browser.newContext({ ignoreHTTPSErrors: http2 });
    const page = await context.newPage();
    for (const into of [cold, reload]) {
      // PROFILE=FILE: a CPU profile of the page's main thread in the first cold run (0.1 ms
      // samples; for cpuprofile_summary.mjs), which runs slower for it.
      const cdp = process.env.PROFILE && i === 0 && into === cold ? await context.newCDPSession(page) : undefined;
      if (cdp) {
        await cdp.send('Profiler.enable');
        await cdp.send('Profiler.setSamplingInterval', { interval: 100 });
        await cdp.send('Profiler.start');
      }
      // TRACE_OUT=FILE: a Chrome trace of the first cold run (V8's wasm events, the page's
      // tasks; for wasm_trace_summary.mjs), which runs slower for it.
      const tracing = process.env.TRACE_OUT && i === 0 && into === cold;
      if (tracing) await browser.startTracing(page, { path: process.env.TRACE_OUT, categories: ['v8.wasm', 'v8', 'devtools.timeline', 'toplevel'] });
      await page.goto(`${origin}/`);
      last = await page.waitForFunction(() => window.result, null, { timeout: 60000 }).then((h) => h.jsonValue());
      if (tracing) await browser.stopTracing();
      if (cdp) writeFileSync(process.env.PROFILE, JSON.stringify((await cdp.send('Profiler.stop')).profile));
      into.push(last.ms);
    }
    await context.close();
  }
} finally {
  await browser.close();
  server.close();
  rmSync(app, { recursive: true, force: true });
}
const median = (xs) => Math.round([...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]);
const reader = peer
  ? { peer: 'hyparquet', file: peerFile, rows: last.rows, hyparquet: JSON.parse(readFileSync(join(repo, 'tests', 'js', 'node_modules', 'hyparquet', 'package.json'), 'utf8')).version }
  : { dist };
console.log(JSON.stringify({ runtime: 'chromium', filter, delay_ms: delay, cold_ms: median(cold), reload_ms: median(reload), all_cold_ms: cold.map(Math.round), all_reload_ms: reload.map(Math.round), requests: last.requests, round_trips: last.round_trips, listing, protocols: last.protocols, js_flags: process.env.JS_FLAGS, ...reader }));
