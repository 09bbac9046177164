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
if (!table || !filter) {
  console.error('usage: first_rows_chromium.mjs TABLE FILTER [DELAY_MS] [RUNS]');
  process.exit(2);
}
const delay = Number(delayArg);
const runs = Number(runsArg);
const dist = process.env.HUDI_EDGE_PKG_DIST ?? join(repo, 'pkg-config', 'dist');
const { chromium } = createRequire(join(repo, 'tests', 'web', 'package.json'))('playwright-core');

// The page: apache-arrow first (the app's), then the package, timed.
const app = mkdtempSync(join(tmpdir(), 'first-rows-chromium-'));
writeFileSync(
  join(app, 'main.js'),
  `await import('apache-arrow');
const filter = ${JSON.stringify(filter)};
const call = async (op, q) => {
  const r = await fetch('/s/' + op + '?' + new URLSearchParams(q));
  if (r.status === 404) throw Object.assign(new Error('not found: ' + q.path), { code: 'NOT_FOUND' });
  if (!r.ok) throw new Error(op + ' ' + r.status);
  return op === 'get' ? new Uint8Array(await r.arrayBuffer()) : r.json();
};
const storage = {
  location: 'bench://table',
  get: (path, start, end) => call('get', start === undefined ? { path } : { path, start, end }),
  head: (path) => call('head', { path }),
  list: (prefix, recursive) => call('list', { prefix, recursive }),
};
const t0 = performance.now();
const { HudiTable } = await import('./pkg.js');
const imported = performance.now() - t0;
const t = await HudiTable.openStorage(storage, { prefetchMetadataTable: true });
for await (const b of t.stream({ filters: [filter] })) break;
const ms = performance.now() - t0;
const io = t.io();
t.close();
const protocols = [...new Set(performance.getEntriesByType('resource').map((e) => e.nextHopProtocol))];
window.result = { ms, imported_ms: imported, requests: io.requests, round_trips: io.roundTrips, protocols };
`,
);
writeFileSync(join(app, 'pkg.js'), `export * from ${JSON.stringify(join(dist, 'browser.js'))};\n`);
const esbuild = join(repo, 'pkg-config', 'node_modules', '.bin', 'esbuild');
execFileSync(esbuild, ['main.js', 'pkg.js', '--bundle', '--splitting', '--format=esm', '--outdir=out', '--log-level=warning', `--resolve-extensions=.js,.mjs`], {
  cwd: app,
  env: { ...process.env, NODE_PATH: join(repo, 'pkg-config', 'node_modules') },
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
      await page.goto(`${origin}/`);
      last = await page.waitForFunction(() => window.result, null, { timeout: 60000 }).then((h) => h.jsonValue());
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
console.log(JSON.stringify({ runtime: 'chromium', filter, delay_ms: delay, cold_ms: median(cold), reload_ms: median(reload), all_cold_ms: cold.map(Math.round), all_reload_ms: reload.map(Math.round), requests: last.requests, round_trips: last.round_trips, listing, protocols: last.protocols, js_flags: process.env.JS_FLAGS, dist }));
