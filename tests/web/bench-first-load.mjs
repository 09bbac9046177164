// Benchmark (not a test): the viewer's first load as a visitor on a 50 Mbit/s link with 40 ms
// round trips sees it (a shaping proxy in front of nginx: tests/web/lib/link.mjs). A fresh
// Chromium profile per run opens `/?table=URL` (a v9 Merge-On-Read sample on the same host);
// the page's own clocks say when the table's timeline was drawn
// (`performance.mark('hudi:timeline-drawn')`, ms after navigation start) and when its data
// panel showed its first rows ('hudi:rows-shown'), and resource timing what crossed the wire
// for the timeline (`transferSize`: headers + encoded body, the HTML included).
//
// www/dist is served by nginx from a copy whose first-load files carry `.gz` (gzip -9) and `.br`
// (brotli 11) twins, as a static host or CDN serves them; each run accepts either gzip only or
// brotli too (Chromium's Accept-Encoding, set over CDP).
//
// `--site DIR` (repeatable) serves other builds of the viewer beside www/dist, the runs of
// each encoding interleaved across them (an A/B); `--mbit 0` serves without the link (what
// the machine itself costs).
//
// `--json FILE` also writes the first build's medians there (tests/bench/race.sh reads them).
//
//   node tests/web/bench-first-load.mjs [--runs N] [--mbit 50] [--rtt 40] [--site DIR ...] [--json FILE] [TABLE]
import { cpSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { brotliCompressSync, constants, gzipSync } from 'node:zlib';
import { launchChromium } from './lib/browser.mjs';
import { startLinkProxy } from './lib/link.mjs';
import { repo, startNginx, unzippedFixtures } from './lib/servers.mjs';
import { tempDir } from '../lib/harness.mjs';

const args = process.argv.slice(2);
/** The value after `--name` (taken out of args), or undefined. */
const take = (name) => {
  const i = args.indexOf(`--${name}`);
  return i >= 0 ? args.splice(i, 2)[1] : undefined;
};
const runs = Number(take('runs') ?? 5);
const mbit = Number(take('mbit') ?? 50);
const rtt = Number(take('rtt') ?? 40);
const jsonAt = take('json');
const builds = [join(repo, 'www', 'dist')];
for (let site; (site = take('site')) !== undefined; ) builds.push(site);
const table = args[0] ?? 'sample_table/mor/avro/v9_txns_simple_meta';

// Each build under /site-N/ of one nginx, its first-load files precompressed: what index.html
// loads (the page, its JS and CSS, the read module); the full module, the SQL card's DuckDB
// and the samples load later and keep nginx's on-the-fly gzip.
const root = tempDir('first-load-sites');
const sites = builds.map((dist, n) => {
  const site = join(root, `site-${n}`);
  cpSync(dist, site, { recursive: true });
  const assets = readdirSync(join(site, 'assets')).map((f) => join('assets', f));
  const firstLoad = ['index.html', ...assets.filter((f) => /^assets\/(index-.*\.(js|css)|hudi_edge_read_bg-.*\.wasm)$/.test(f))];
  for (const f of firstLoad) {
    const bytes = readFileSync(join(site, f));
    writeFileSync(join(site, `${f}.gz`), gzipSync(bytes, { level: 9 }));
    writeFileSync(join(site, `${f}.br`), brotliCompressSync(bytes, { params: { [constants.BROTLI_PARAM_QUALITY]: 11, [constants.BROTLI_PARAM_SIZE_HINT]: bytes.length } }));
  }
  return { dist, path: `/site-${n}/` };
});

const nginx = await startNginx({ mounts: { '/tables/': join(unzippedFixtures(), 'tables'), '/': root }, precompressed: true });
const link = mbit > 0 ? await startLinkProxy(nginx.url, { mbit, rttMs: rtt }) : undefined;
const origin = link?.url ?? nginx.url;
const tableUrl = `${origin}/tables/${table}`;
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const kib = (n) => `${(n / 1024).toFixed(1)} KiB`;
const mib = (n) => `${(n / 1024 / 1024).toFixed(2)} MiB`;

const shape = link ? `${mbit} Mbit/s, ${rtt} ms RTT` : 'loopback, no link between';
console.log(`viewer first load: ${table}, ${shape}, ${runs} fresh profiles per encoding and build`);
const modes = [
  { name: 'gzip', encodings: ['gzip', 'deflate'] },
  { name: 'brotli', encodings: ['gzip', 'deflate', 'br'] },
];
const summary = { table, mbit, rtt_ms: rtt, runs };
try {
  for (const mode of modes) {
    const results = sites.map(() => ({ drawn: [], rows: [], last: undefined }));
    for (let r = 0; r < runs; r++) {
      for (const [n, site] of sites.entries()) {
        const browser = await launchChromium();
        try {
          const page = await browser.newPage();
          const cdp = await page.context().newCDPSession(page);
          await cdp.send('Network.enable');
          await cdp.send('Network.setCacheDisabled', { cacheDisabled: true });
          await cdp.send('Network.setExtraHTTPHeaders', { headers: { 'Accept-Encoding': mode.encodings.join(', ') } });
          await page.goto(`${origin}${site.path}?table=${encodeURIComponent(tableUrl)}`);
          await page.waitForSelector('body[data-timeline-drawn=yes]', { timeout: 60000 });
          const atTimeline = await page.evaluate(transfer);
          await page.waitForSelector('body[data-ready=yes]', { timeout: 60000 });
          const atReady = await page.evaluate(transfer);
          results[n].drawn.push(atTimeline.drawnMs);
          results[n].rows.push(atReady.rowsMs);
          results[n].last = { atTimeline, atReady };
          await page.close();
        } finally {
          await browser.close();
        }
      }
    }
    // A build without the rows-shown mark (an older viewer) reports no rows time.
    const rowsMedian = (rows) => (rows.every((x) => x !== undefined) ? median(rows) : undefined);
    const [first] = results;
    const firstRows = rowsMedian(first.rows);
    summary[mode.name] = { drawn_ms: Math.round(median(first.drawn)), rows_ms: firstRows === undefined ? null : Math.round(firstRows), transfer_bytes: first.last.atTimeline.total, responses: first.last.atTimeline.entries.length };
    for (const [n, { drawn, rows, last }] of results.entries()) {
      const { atTimeline, atReady } = last;
      console.log(`\n${mode.name} (Accept-Encoding: ${mode.encodings.join(', ')}), ${sites[n].dist}`);
      console.log(`  timeline drawn: median ${median(drawn).toFixed(0)} ms after navigation start (${drawn.map((x) => x.toFixed(0)).join(' / ')})`);
      const rowsMid = rowsMedian(rows);
      if (rowsMid !== undefined) console.log(`  first rows shown (the data panel's first query): median ${rowsMid.toFixed(0)} ms (${rows.map((x) => x.toFixed(0)).join(' / ')})`);
      console.log(`  transferred for it: ${mib(atTimeline.total)} (${kib(atTimeline.total)}) in ${atTimeline.entries.length} responses; once the page is ready: ${mib(atReady.all)} in ${atReady.count}`);
      console.log('  the last run, each response the first screen waited for (ms after navigation start):');
      for (const e of atTimeline.entries) {
        console.log(`    ${e.start.toFixed(0).padStart(5)} → ${e.end.toFixed(0).padStart(5)}  ${kib(e.transfer).padStart(11)} (${kib(e.decoded).padStart(10)} decoded)  ${e.name}`);
      }
    }
  }
  if (jsonAt) writeFileSync(jsonAt, JSON.stringify(summary));
} finally {
  await link?.stop();
  await nginx.stop();
}

/** In the page: every response so far (navigation included), its bytes on the wire and decoded. */
function transfer() {
  const entries = [...performance.getEntriesByType('navigation'), ...performance.getEntriesByType('resource')].map((e) => ({
    name: new URL(e.name).pathname.split('/').slice(-2).join('/'),
    transfer: e.transferSize,
    decoded: e.decodedBodySize,
    start: e.startTime,
    end: e.responseEnd,
  }));
  const drawnMs = performance.getEntriesByName('hudi:timeline-drawn')[0]?.startTime;
  const rowsMs = performance.getEntriesByName('hudi:rows-shown')[0]?.startTime;
  // What the first screen waited for: the responses started before it was drawn.
  const before = entries.filter((e) => e.start <= drawnMs);
  return { entries: before, total: before.reduce((n, e) => n + e.transfer, 0), all: entries.reduce((n, e) => n + e.transfer, 0), count: entries.length, drawnMs, rowsMs };
}
